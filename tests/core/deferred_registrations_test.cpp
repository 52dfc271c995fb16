// The queues of deferred registrations (Config::defer_registration): each queue's tasks are
// registered once each, in the order they were pushed, whether a holder takes a few at a time or
// all of them, and while their thread keeps pushing and several threads take turns.
#include "core/deferred_registrations.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace {

using versa::detail::DeferredRegistrations;
using versa::detail::Task;

TEST(DeferredRegistrationsTest, TakesAQueuesTasksOldestFirstAFewAtATime) {
  std::vector<Task> tasks(10);
  DeferredRegistrations queues;
  EXPECT_FALSE(queues.any());
  for (Task& task : tasks) queues.push(3, &task);
  EXPECT_TRUE(queues.any());
  std::vector<Task*> order;
  auto record = [&](Task* task) { order.push_back(task); };
  EXPECT_EQ(queues.register_some(record, 4), 4u);
  EXPECT_EQ(queues.register_some(record, 4), 4u);
  EXPECT_TRUE(queues.any());  // two are left among those taken
  queues.push(3, &tasks[0]);  // pushed again after the others: registered after them
  EXPECT_EQ(queues.register_some(record, 4), 2u);
  EXPECT_EQ(queues.register_some(record, 4), 1u);
  EXPECT_EQ(queues.register_some(record, 4), 0u);
  EXPECT_FALSE(queues.any());
  ASSERT_EQ(order.size(), 11u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(order[i], &tasks[i]) << i;
  EXPECT_EQ(order[10], &tasks[0]);
}

TEST(DeferredRegistrationsTest, RegisterAllEmptiesEveryQueue) {
  std::vector<Task> tasks(6);
  DeferredRegistrations queues;
  for (int i = 0; i < 6; ++i) queues.push(i % 3 == 0 ? 0 : 15, &tasks[i]);
  std::vector<Task*> order;
  auto record = [&](Task* task) { order.push_back(task); };
  EXPECT_EQ(queues.register_some(record, 1), 1u);  // queue 0's oldest
  queues.register_all(record);
  EXPECT_FALSE(queues.any());
  const std::vector<Task*> expected{&tasks[0], &tasks[3], &tasks[1],
                                    &tasks[2], &tasks[4], &tasks[5]};
  EXPECT_EQ(order, expected);
}

// What a holder left taken and what was pushed after it: register_all takes both, in order.
TEST(DeferredRegistrationsTest, RegisterAllTakesWhatWasPushedAfterAPartialTurn) {
  std::vector<Task> tasks(5);
  DeferredRegistrations queues;
  for (int i = 0; i < 3; ++i) queues.push(0, &tasks[i]);
  std::vector<Task*> order;
  auto record = [&](Task* task) { order.push_back(task); };
  EXPECT_EQ(queues.register_some(record, 1), 1u);  // tasks 1 and 2 stay taken
  for (int i = 3; i < 5; ++i) queues.push(0, &tasks[i]);
  queues.register_all(record);
  EXPECT_FALSE(queues.any());
  ASSERT_EQ(order.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(order[i], &tasks[i]) << i;
}

// Two threads push 20,000 tasks each into their own queue while three threads register them in
// turns: every task exactly once, each queue's in its order.
TEST(DeferredRegistrationsTest, ConcurrentPushersAndRegistrarsKeepEachQueuesOrder) {
  constexpr int per_queue = 20000;
  std::vector<Task> tasks(2 * per_queue);
  std::vector<int> index_of_task_in_queue(2 * per_queue);
  DeferredRegistrations queues;
  std::vector<std::atomic<int>> seen(2 * per_queue);
  std::atomic<int> last[2] = {-1, -1};
  std::atomic<bool> out_of_order{false};
  std::atomic<int> registered{0};
  auto record = [&](Task* task) {
    const auto i = static_cast<int>(task - tasks.data());
    seen[i].fetch_add(1);
    const int queue = i / per_queue;
    const int position = i % per_queue;
    // Under the queue's turn: only one thread registers a queue's tasks at a time.
    if (last[queue].exchange(position) != position - 1) out_of_order.store(true);
    registered.fetch_add(1);
  };
  std::vector<std::thread> threads;
  for (int queue = 0; queue < 2; ++queue)
    threads.emplace_back([&, queue] {
      for (int k = 0; k < per_queue; ++k) queues.push(queue, &tasks[queue * per_queue + k]);
    });
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&] {
      while (registered.load() < 2 * per_queue)
        if (queues.register_some(record, 16) == 0) std::this_thread::yield();
    });
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(out_of_order.load());
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](const auto& n) { return n.load() == 1; }));
  EXPECT_FALSE(queues.any());
}

}  // namespace
