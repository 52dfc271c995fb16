// Many small tasks: every task runs exactly once, per-handle order is the submission order, and
// recursive spawning keeps its count. Too slow for ThreadSanitizer, which CI skips with
// --gtest_filter=-*Stress*.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <random>
#include <vector>

#include "versa/versa.hpp"

namespace {

versa::Config workers(int n) {
  versa::Config config;
  config.cpu_workers = n;
  config.pin_workers = false;
  return config;
}

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
      rt.submit("count", [sequence](versa::Span<Counter> c) {
        if (c[0].last_sequence >= sequence) ++c[0].out_of_order;
        c[0].last_sequence = sequence;
        ++c[0].count;
      }, versa::write(hs[block[k]]));
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
    rt.spawn("tree", [&rt, &visits, &left_count, left] { left_count = count_tree(rt, visits, left); });
  if (right > 0)
    rt.spawn("tree", [&rt, &visits, &right_count, right] {
      right_count = count_tree(rt, visits, right);
    });
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

INSTANTIATE_TEST_SUITE_P(Workers, StressTest, testing::Values(2, 4));

}  // namespace
