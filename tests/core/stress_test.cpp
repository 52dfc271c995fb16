// Many small tasks: every task runs exactly once, per-handle order is the submission order, and
// recursive spawning keeps its count. Too slow for ThreadSanitizer, which CI skips with
// --gtest_filter=-*Stress*.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using versa::testing::workers;

class StressTest : public testing::TestWithParam<int> {
 protected:
  versa::Runtime rt{workers(GetParam())};
};

TEST_P(StressTest, MillionIndependentTasksEachRunExactlyOnce) {
  constexpr int tasks = 1'000'000;
  std::vector<std::atomic<int>> runs(tasks);
  for (int i = 0; i < tasks; ++i)
    rt.submit("empty", [&runs, i] { runs[i].fetch_add(1, std::memory_order_relaxed); });
  rt.wait_all();
  int wrong = 0;
  int first_wrong = -1;
  for (int i = 0; i < tasks; ++i) {
    if (runs[i].load(std::memory_order_relaxed) == 1) continue;
    if (wrong++ == 0) first_wrong = i;
  }
  EXPECT_EQ(wrong, 0) << "task " << first_wrong << " ran " << runs[first_wrong] << " times";
}

// Per handle: how many tasks wrote it, the sequence number of the last one, and how many saw a
// later task's sequence number before their own (which a reordering would cause).
struct Counter {
  long count = 0;
  long last_sequence = -1;
  long out_of_order = 0;
};

TEST_P(StressTest, MillionWritesOverSixtyFourHandlesKeepSubmissionOrderPerHandle) {
  constexpr int handles = 64;
  constexpr long tasks = 1'000'000;
  static_assert(tasks % handles == 0);
  std::vector<Counter> counters(handles);
  std::vector<versa::Handle<Counter>> hs;
  for (Counter& c : counters) hs.push_back(rt.data(c));

  // Each block of 64 consecutive tasks writes every handle once, in a random order: the handles
  // end up with equal counts and the interleaving differs from block to block.
  std::vector<int> block(handles);
  std::iota(block.begin(), block.end(), 0);
  std::mt19937 random(12345);
  std::vector<long> last_expected(handles, -1);
  for (long first = 0; first < tasks; first += handles) {
    std::shuffle(block.begin(), block.end(), random);
    for (int k = 0; k < handles; ++k) {
      const long sequence = first + k;
      rt.submit(
          "count",
          [sequence](versa::Span<Counter> c) {
            if (c[0].last_sequence >= sequence) ++c[0].out_of_order;
            c[0].last_sequence = sequence;
            ++c[0].count;
          },
          versa::write(hs[block[k]]));
      last_expected[block[k]] = sequence;
    }
  }
  rt.wait_all();
  for (int k = 0; k < handles; ++k) {
    EXPECT_EQ(counters[k].count, tasks / handles) << "handle " << k;
    EXPECT_EQ(counters[k].out_of_order, 0) << "handle " << k;
    EXPECT_EQ(counters[k].last_sequence, last_expected[k]) << "handle " << k;
  }
}

// Visits a binary tree of `size` nodes by spawning one task per subtree; returns the number of
// nodes counted below and including this one, which is only right if sync() waited for both
// subtrees.
long count_tree(versa::Runtime& rt, std::atomic<long>& visits, long size) {
  visits.fetch_add(1, std::memory_order_relaxed);
  const long left = (size - 1) / 2;
  const long right = size - 1 - left;
  long left_count = 0;
  long right_count = 0;
  if (left > 0)
    rt.spawn("tree",
             [&rt, &visits, &left_count, left] { left_count = count_tree(rt, visits, left); });
  if (right > 0)
    rt.spawn("tree",
             [&rt, &visits, &right_count, right] { right_count = count_tree(rt, visits, right); });
  rt.sync();
  return 1 + left_count + right_count;
}

TEST_P(StressTest, HundredThousandRecursivelySpawnedTasksAreAllCounted) {
  constexpr long nodes = 100'000;
  std::atomic<long> visits{0};
  long counted = 0;
  rt.spawn("root", [&] { counted = count_tree(rt, visits, nodes); });
  rt.sync();
  EXPECT_EQ(counted, nodes);
  EXPECT_EQ(visits.load(), nodes);
  rt.wait_all();
}

// Submits bursts of 1 to 7 empty tasks and waits for each, with busy gaps of 0 to 300 us in
// between so that the workers go to sleep, and are woken, at ever different moments. Runs for
// `duration`; ends the process with exit code 3 if no task finishes for `stall_limit` (a lost
// wake-up: every worker asleep with tasks queued, and wait_all blocked for ever).
void run_bursts_or_exit_on_stall(versa::Runtime& rt, std::chrono::milliseconds duration,
                                 std::chrono::milliseconds stall_limit) {
  using Clock = std::chrono::steady_clock;
  std::atomic<long> finished{0};
  std::atomic<bool> stop{false};
  std::thread watchdog([&] {
    long last = -1;
    auto last_change = Clock::now();
    while (!stop.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const long now_finished = finished.load();
      if (now_finished != last) {
        last = now_finished;
        last_change = Clock::now();
      } else if (Clock::now() - last_change > stall_limit) {
        std::fprintf(stderr, "no task finished for %lld ms after %ld tasks\n",
                     static_cast<long long>(stall_limit.count()), now_finished);
        std::_Exit(3);
      }
    }
  });
  const auto end = Clock::now() + duration;
  for (long round = 0; Clock::now() < end; ++round) {
    const int burst = 1 + static_cast<int>(round % 7);
    for (int i = 0; i < burst; ++i) rt.submit("burst", [&finished] { finished.fetch_add(1); });
    rt.wait_all();
    const auto gap_end = Clock::now() + std::chrono::microseconds(round * 37 % 300);
    while (Clock::now() < gap_end) {
    }
  }
  stop = true;
  watchdog.join();
}

// The workers' sleep protocol must never lose a wake-up. A lost one hangs the program, so the
// scenario runs in a child process (threadsafe death-test style) with a watchdog and an alarm.
TEST_P(StressTest, SleepingWorkersAreWokenForEveryBurstOfWork) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(20);
        run_bursts_or_exit_on_stall(rt, std::chrono::milliseconds(3000),
                                    std::chrono::milliseconds(2000));
        std::_Exit(0);
      },
      testing::ExitedWithCode(0), "")
      << "exit code 3: the workers slept while tasks were queued (a lost wake-up)";
}

INSTANTIATE_TEST_SUITE_P(Workers, StressTest, testing::Values(2, 4));

}  // namespace
