// The per-worker ready deque: owner LIFO at the bottom, thieves FIFO at the top, priorities
// apart, growth without loss, exactly-once hand-out under concurrent owner and thieves, and
// thieves taking half at once from a submission deque, whose owner pushes and pops only beyond
// their reach.
#include "cpu/ready_deque.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <random>
#include <thread>
#include <vector>

namespace {

using versa::detail::ReadyDeque;
using versa::detail::Task;

TEST(ReadyDequeTest, OwnerPopsItsOwnPushesInLifoOrder) {
  std::vector<Task> tasks(5);
  ReadyDeque queue;
  for (Task& task : tasks) queue.push_front(&task);
  for (int i = 4; i >= 0; --i) EXPECT_EQ(queue.pop_front(), &tasks[i]);
  EXPECT_EQ(queue.pop_front(), nullptr);
}

TEST(ReadyDequeTest, ThiefTakesTheOldestTask) {
  std::vector<Task> tasks(5);
  ReadyDeque queue;
  for (Task& task : tasks) queue.push_front(&task);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(queue.pop_back(), &tasks[i]);
  EXPECT_EQ(queue.pop_back(), nullptr);
}

TEST(ReadyDequeTest, PushListRunsItsLastTaskFirstAndLetsThievesTakeItsFirst) {
  std::vector<Task> tasks(5);
  ReadyDeque queue;
  queue.push_front(&tasks[4]);
  for (int i = 0; i < 3; ++i) tasks[i].ready_next = i < 2 ? &tasks[i + 1] : nullptr;
  queue.push_list(&tasks[0]);  // 0 -> 1 -> 2
  queue.push_front(&tasks[3]);
  // Bottom to top: 3 2 1 0 4.
  EXPECT_EQ(queue.pop_front(), &tasks[3]);
  EXPECT_EQ(queue.pop_back(), &tasks[4]);
  EXPECT_EQ(queue.pop_back(), &tasks[0]);
  EXPECT_EQ(queue.pop_front(), &tasks[2]);
  EXPECT_EQ(queue.pop_front(), &tasks[1]);
  EXPECT_EQ(queue.pop_front(), nullptr);
  queue.push_list(nullptr);
  EXPECT_EQ(queue.size_hint(), 0u);
}

TEST(ReadyDequeTest, GrowsBeyondItsInitialCapacityKeepingEveryTaskInOrder) {
  // Thieves taking from the top between pushes make the ring wrap before it grows past 256.
  constexpr int count = 1000;
  std::vector<Task> tasks(count);
  ReadyDeque queue;
  int stolen = 0;
  for (int i = 0; i < count; ++i) {
    queue.push_front(&tasks[i]);
    if (i % 4 == 3) {
      ASSERT_EQ(queue.pop_back(), &tasks[stolen++]);
    }
  }
  EXPECT_EQ(queue.size_hint(), static_cast<std::size_t>(count - stolen));
  for (int i = count - 1; i >= 600; --i) ASSERT_EQ(queue.pop_front(), &tasks[i]) << i;
  for (int i = stolen; i < 600; ++i) ASSERT_EQ(queue.pop_back(), &tasks[i]) << i;
  EXPECT_EQ(queue.pop_front(), nullptr);
  EXPECT_EQ(queue.size_hint(), 0u);
}

TEST(ReadyDequeTest, MatchesAStdDequeUnderRandomOperations) {
  constexpr int count = 3000;
  std::vector<Task> tasks(count);
  ReadyDeque queue;
  std::deque<Task*> model;
  std::mt19937 random(2024);
  int next = 0;
  for (int step = 0; step < 20000; ++step) {
    // Biased towards pushing until the tasks run out, so the deque grows several times.
    const int op = static_cast<int>(random() % 8);
    if (op < 5 && next < count) {
      Task* task = &tasks[next++];
      queue.push_front(task);
      model.push_front(task);
    } else if (op % 2 == 0) {
      Task* expected = model.empty() ? nullptr : model.front();
      if (!model.empty()) model.pop_front();
      ASSERT_EQ(queue.pop_front(), expected) << "step " << step;
    } else {
      Task* expected = model.empty() ? nullptr : model.back();
      if (!model.empty()) model.pop_back();
      ASSERT_EQ(queue.pop_back(), expected) << "step " << step;
    }
    ASSERT_EQ(queue.size_hint(), model.size()) << "step " << step;
    if (next == count && model.empty()) break;
  }
}

TEST(ReadyDequeTest, PositivePrioritiesFirstThenPlainTasksThenNegativePriorities) {
  const std::vector<int> priorities = {0, 5, -1, 0, 2, -7, 0, 9};
  std::vector<Task> owner_tasks(priorities.size());
  std::vector<Task> thief_tasks(priorities.size());
  ReadyDeque owner_queue;
  ReadyDeque thief_queue;
  for (std::size_t i = 0; i < priorities.size(); ++i) {
    owner_tasks[i].priority = priorities[i];
    thief_tasks[i].priority = priorities[i];
    owner_queue.push_front(&owner_tasks[i]);
    thief_queue.push_front(&thief_tasks[i]);
  }
  // Highest priority first; the plain tasks in each side's order; then -1 before -7.
  for (const int i : {7, 1, 4, 6, 3, 0, 2, 5})
    EXPECT_EQ(owner_queue.pop_front(), &owner_tasks[i]) << i;
  for (const int i : {7, 1, 4, 0, 3, 6, 2, 5})
    EXPECT_EQ(thief_queue.pop_back(), &thief_tasks[i]) << i;
  EXPECT_EQ(owner_queue.pop_front(), nullptr);
  EXPECT_EQ(thief_queue.pop_back(), nullptr);
}

TEST(ReadyDequeTest, PrioritisedTaskOvertakesPlainOnesAtBothEnds) {
  std::vector<Task> tasks(4);
  tasks[3].priority = 1;
  ReadyDeque queue;
  for (int i : {0, 1, 3, 2}) queue.push_front(&tasks[i]);
  EXPECT_EQ(queue.pop_back(), &tasks[3]);
  EXPECT_EQ(queue.pop_back(), &tasks[0]);
  tasks[3].priority = 2;
  queue.push_front(&tasks[3]);
  EXPECT_EQ(queue.pop_front(), &tasks[3]);
  EXPECT_EQ(queue.pop_front(), &tasks[2]);
  EXPECT_EQ(queue.pop_front(), &tasks[1]);
}

TEST(ReadyDequeTest, SizeHintCountsPlainAndPrioritisedTasks) {
  std::vector<Task> tasks(6);
  tasks[1].priority = 3;
  tasks[4].priority = -2;
  ReadyDeque queue;
  EXPECT_EQ(queue.size_hint(), 0u);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    queue.push_front(&tasks[i]);
    EXPECT_EQ(queue.size_hint(), i + 1);
  }
  for (std::size_t left = tasks.size(); left > 0; --left) {
    ASSERT_NE(left % 2 == 0 ? queue.pop_front() : queue.pop_back(), nullptr);
    EXPECT_EQ(queue.size_hint(), left - 1);
  }
  EXPECT_EQ(queue.pop_front(), nullptr);
  EXPECT_EQ(queue.pop_back(), nullptr);
  EXPECT_EQ(queue.size_hint(), 0u);
}

TEST(ReadyDequeTest, OwnerAndThievesTakeEveryTaskExactlyOnce) {
  constexpr int count = 100'000;
  constexpr int thieves = 3;
  std::vector<Task> tasks(count);
  for (int i = 0; i < count; i += 16) tasks[i].priority = (i / 16) % 5 - 2;  // some prioritised
  ReadyDeque queue;
  std::atomic<bool> owner_done{false};
  // taken[0] is the owner's; each thread appends only to its own.
  std::vector<std::vector<Task*>> taken(thieves + 1);

  std::vector<std::thread> threads;
  for (int t = 1; t <= thieves; ++t) {
    threads.emplace_back([&, t] {
      std::vector<Task*>& mine = taken[t];
      for (;;) {
        if (Task* task = queue.pop_back()) {
          mine.push_back(task);
        } else if (owner_done.load(std::memory_order_acquire)) {
          return;
        } else {
          std::this_thread::yield();
        }
      }
    });
  }
  for (int i = 0; i < count; ++i) {
    if (i % 5 == 4 && i + 2 < count && i % 16 > 2 && i % 16 < 13) {
      // Three plain tasks at once, as an inbox is taken.
      tasks[i].ready_next = &tasks[i + 1];
      tasks[i + 1].ready_next = &tasks[i + 2];
      tasks[i + 2].ready_next = nullptr;
      queue.push_list(&tasks[i]);
      i += 2;
    } else {
      queue.push_front(&tasks[i]);
    }
    if (i % 3 == 0) {
      if (Task* task = queue.pop_front()) taken[0].push_back(task);
    }
  }
  while (Task* task = queue.pop_front()) taken[0].push_back(task);
  owner_done.store(true, std::memory_order_release);
  for (std::thread& thread : threads) thread.join();

  std::vector<int> times(count, 0);
  std::size_t total = 0;
  for (const auto& list : taken) {
    total += list.size();
    for (Task* task : list) {
      const std::ptrdiff_t index = task - tasks.data();
      ASSERT_TRUE(index >= 0 && index < count) << "a pointer that was never pushed";
      ++times[index];
    }
  }
  EXPECT_EQ(total, static_cast<std::size_t>(count));
  int wrong = 0;
  for (int i = 0; i < count; ++i) wrong += times[i] != 1;
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(queue.size_hint(), 0u);
}

TEST(ReadyDequeTest, StealHalfTakesTheOldestHalfUpToTheCapacity) {
  std::vector<Task> tasks(10);
  ReadyDeque queue;
  for (Task& task : tasks) queue.push_front(&task);
  Task* out[4] = {};
  ASSERT_EQ(queue.steal_half(out, 4), 4u);  // half of 10 is 5, capped at 4
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], &tasks[i]);
  ASSERT_EQ(queue.steal_half(out, 4), 3u);  // half of 6, rounded up
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i], &tasks[4 + i]);
  ASSERT_EQ(queue.steal_half(out, 4), 2u);
  ASSERT_EQ(queue.steal_half(out, 4), 1u);
  EXPECT_EQ(out[0], &tasks[9]);
  EXPECT_EQ(queue.steal_half(out, 4), 0u);
  EXPECT_EQ(queue.size_hint(), 0u);
}

TEST(ReadyDequeTest, StealHalfTakesPrioritisedTasksOneAtATimeHighestFirst) {
  std::vector<Task> tasks(4);
  tasks[1].priority = 1;
  tasks[3].priority = 2;
  ReadyDeque queue;
  for (Task& task : tasks) queue.push_front(&task);
  Task* out[8] = {};
  ASSERT_EQ(queue.steal_half(out, 8), 1u);
  EXPECT_EQ(out[0], &tasks[3]);
  ASSERT_EQ(queue.steal_half(out, 8), 1u);
  EXPECT_EQ(out[0], &tasks[1]);
  ASSERT_EQ(queue.steal_half(out, 8), 1u);  // half of the two plain ones
  EXPECT_EQ(out[0], &tasks[0]);
}

TEST(ReadyDequeTest, PopBeyondTakesTheNewestUntilOnlyTheReachIsLeft) {
  std::vector<Task> tasks(40);
  ReadyDeque queue;
  for (Task& task : tasks) queue.push_front(&task);
  for (int i = 39; i >= 32; --i) ASSERT_EQ(queue.pop_bottom_beyond(32), &tasks[i]);
  EXPECT_EQ(queue.pop_bottom_beyond(32), nullptr);
  EXPECT_EQ(queue.size_hint(), 32u);
  Task* out[32];
  EXPECT_EQ(queue.steal_half(out, 32), 16u);
  EXPECT_EQ(out[0], &tasks[0]);
}

TEST(ReadyDequeTest, HoldsAtLeastCountsWhatThievesLeft) {
  std::vector<Task> tasks(100);
  ReadyDeque queue;
  for (Task& task : tasks) queue.push_front(&task);
  EXPECT_TRUE(queue.holds_at_least(100));
  EXPECT_FALSE(queue.holds_at_least(101));
  Task* out[32];
  ASSERT_EQ(queue.steal_half(out, 32), 32u);
  EXPECT_FALSE(queue.holds_at_least(69));
  EXPECT_TRUE(queue.holds_at_least(68));
}

// A submission deque: three thieves take halves (at most `reach` at once) while the owner pushes
// every task (the ring grows meanwhile) and, with `owner_pops`, pops bursts beyond their reach
// after some pushes (the submitting thread running tasks in its window). Returns how many times
// each task was taken, and how many the owner took.
std::vector<int> times_taken(std::vector<Task>& tasks, bool owner_pops, std::size_t& by_owner) {
  constexpr int thieves = 3;
  constexpr std::size_t reach = 32;
  ReadyDeque queue;
  std::atomic<bool> owner_done{false};
  std::vector<std::vector<Task*>> taken(thieves + 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < thieves; ++t) {
    threads.emplace_back([&, t] {
      Task* batch[reach];
      for (;;) {
        const bool last_look = owner_done.load(std::memory_order_acquire);
        const std::size_t n = queue.steal_half(batch, reach);
        taken[t].insert(taken[t].end(), batch, batch + n);
        if (n == 0 && last_look && queue.size_hint() == 0) return;
        if (n == 0) std::this_thread::yield();
      }
    });
  }
  std::mt19937 random(7);
  for (Task& task : tasks) {
    queue.push_front(&task);
    if (!owner_pops || random() % 3 != 0) continue;
    for (unsigned k = random() % 48; k > 0; --k) {  // down to the reach when the thieves are slow
      Task* popped = queue.pop_bottom_beyond(reach);
      if (!popped) break;
      taken[thieves].push_back(popped);
    }
  }
  owner_done.store(true, std::memory_order_release);
  for (std::thread& thread : threads) thread.join();

  std::vector<int> times(tasks.size(), 0);
  for (const auto& list : taken)
    for (Task* task : list) ++times[task - tasks.data()];
  by_owner = taken[thieves].size();
  return times;
}

int taken_other_than_once(const std::vector<int>& times) {
  int wrong = 0;
  for (int t : times) wrong += t != 1;
  return wrong;
}

TEST(ReadyDequeTest, ThievesTakingHalvesGetEveryTaskExactlyOnce) {
  std::vector<Task> tasks(100'000);
  for (std::size_t i = 0; i < tasks.size(); i += 64) tasks[i].priority = 1;  // some prioritised
  std::size_t by_owner = 0;
  EXPECT_EQ(taken_other_than_once(times_taken(tasks, false, by_owner)), 0);
  EXPECT_EQ(by_owner, 0u);
}

TEST(ReadyDequeTest, OwnerPoppingBeyondTheReachAndThievesTakingHalvesShareEveryTaskOnce) {
  std::vector<Task> tasks(100'000);
  std::size_t by_owner = 0;
  EXPECT_EQ(taken_other_than_once(times_taken(tasks, true, by_owner)), 0);
  EXPECT_GT(by_owner, 0u);
}

}  // namespace
