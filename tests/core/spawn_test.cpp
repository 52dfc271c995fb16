// Tasks that create tasks: spawn/sync recursion and nested submissions, against sequential code.
#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <tuple>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using versa::testing::workers;

long fib_sequential(int n) { return n < 2 ? n : fib_sequential(n - 1) + fib_sequential(n - 2); }

long fib(versa::Runtime& rt, int n) {
  if (n < 12) return fib_sequential(n);
  long a = 0, b = 0;
  rt.spawn("fib", [&rt, &a, n] { a = fib(rt, n - 1); });
  rt.spawn("fib", [&rt, &b, n] { b = fib(rt, n - 2); });
  rt.sync();
  return a + b;
}

// Parameters: workers, whether the waiting thread runs tasks (Config::caller_runs_tasks), and
// whether tasks are tracked (untracked, spawns take the runtime's short path).
class Spawn : public testing::TestWithParam<std::tuple<int, bool, bool>> {
 protected:
  static versa::Config config() {
    versa::Config c = workers(std::get<0>(GetParam()));
    c.caller_runs_tasks = std::get<1>(GetParam());
    return std::get<2>(GetParam()) ? c : versa::testing::untracked(c);
  }
  versa::Runtime rt{config()};
};

TEST_P(Spawn, RecursiveFibonacciMatchesSequential) {
  long result = 0;
  rt.submit("root", [&] { result = fib(rt, 24); });
  rt.wait_all();
  EXPECT_EQ(result, fib_sequential(24));
}

TEST_P(Spawn, MainProgramCanSpawnAndSync) {
  std::vector<long> results(8, 0);
  for (int i = 0; i < 8; ++i) rt.spawn("fib", [&, i] { results[i] = fib(rt, 14 + i); });
  rt.sync();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(results[i], fib_sequential(14 + i));
}

TEST_P(Spawn, ParentFinishesOnlyAfterItsChildren) {
  // The parent writes a handle and spawns children without syncing; a reader of the handle
  // submitted afterwards must see every child's contribution.
  std::atomic<int> children_done{0};
  int value = 0;
  auto h = rt.data(value);
  int seen_by_reader = -1;
  rt.submit(
      "parent",
      [&](versa::Span<int> v) {
        v[0] = 1;
        for (int i = 0; i < 16; ++i) rt.spawn("child", [&] { ++children_done; });
      },
      versa::write(h));
  rt.submit(
      "reader", [&](versa::Span<const int>) { seen_by_reader = children_done.load(); },
      versa::read(h));
  rt.wait_all();
  EXPECT_EQ(seen_by_reader, 16);
}

TEST_P(Spawn, NestedSubmissionsWithDataFollowProgramOrder) {
  // A task submits further tasks on handles it does not hold; they order after it like any
  // later submission.
  std::vector<int> cells(16, 0);
  std::vector<versa::Handle<int>> handles;
  for (int& c : cells) handles.push_back(rt.data(c));
  rt.submit("generator", [&] {
    for (int round = 1; round <= 10; ++round)
      for (int i = 0; i < 16; ++i)
        rt.submit(
            "step", [round](versa::Span<int> c) { c[0] = c[0] * 3 + round; },
            versa::write(handles[i]));
  });
  rt.wait_all();
  int expected = 0;
  for (int round = 1; round <= 10; ++round) expected = expected * 3 + round;
  for (int c : cells) EXPECT_EQ(c, expected);
}

TEST_P(Spawn, SpawnedChildrenMayUseTheirOwnHandles) {
  long total = 0;
  rt.submit("parent", [&] {
    std::vector<long> partial(8, 0);
    std::vector<versa::Handle<long>> handles;
    for (long& p : partial) handles.push_back(rt.data(p));
    for (int i = 0; i < 8; ++i)
      for (int k = 1; k <= 10; ++k)
        rt.spawn(
            "add", [k](versa::Span<long> p) { p[0] += k; }, versa::write(handles[i]));
    rt.sync();
    total = std::accumulate(partial.begin(), partial.end(), 0L);
  });
  rt.wait_all();
  EXPECT_EQ(total, 8 * 55);
}

INSTANTIATE_TEST_SUITE_P(Workers, Spawn,
                         testing::Combine(testing::Values(1, 2, 4, 8), testing::Bool(),
                                          testing::Bool()));

// One worker and a main thread that only waits: no one takes the children before the parent's
// sync, so the parent sees each of them queued on its worker.
TEST(SurplusTasks, CountsTheTasksQueuedOnTheCallingWorker) {
  for (const bool tracked : {true, false}) {
    SCOPED_TRACE(tracked ? "tracked" : "untracked (spawn's short way)");
    versa::Config config = workers(1);
    config.caller_runs_tasks = false;
    versa::Runtime rt{tracked ? config : versa::testing::untracked(config)};
    EXPECT_EQ(rt.surplus_tasks(), 0u);  // the main thread is no worker
    std::vector<std::size_t> seen;
    rt.spawn("parent", [&] {
      for (int i = 0; i < 3; ++i) {
        rt.spawn("child", [] {});
        seen.push_back(rt.surplus_tasks());
      }
      rt.sync();
      seen.push_back(rt.surplus_tasks());
    });
    rt.sync();
    EXPECT_EQ(seen, (std::vector<std::size_t>{1, 2, 3, 0}));
  }
}

}  // namespace
