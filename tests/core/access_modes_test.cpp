// Semantics of each access mode against the table of DESIGN.md section 1, on 1 to 8 workers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <tuple>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using namespace std::chrono_literals;

using versa::testing::workers;

// Counts how many instrumented tasks run at the same time.
class OverlapProbe {
 public:
  void enter() {
    const int now = ++running_;
    int seen = max_;
    while (now > seen && !max_.compare_exchange_weak(seen, now)) {
    }
  }
  void leave() { --running_; }
  int max_overlap() const { return max_; }

 private:
  std::atomic<int> running_{0};
  std::atomic<int> max_{0};
};

// Waits until `count` tasks have arrived, or gives up after a timeout. Returns whether all came:
// proof that that many tasks ran at the same time.
bool rendezvous(std::atomic<int>& arrived, int count) {
  ++arrived;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (arrived.load() < count)
    if (std::chrono::steady_clock::now() > deadline) return false;
  return true;
}

class AccessModes : public testing::TestWithParam<int> {
 protected:
  versa::Runtime rt{workers(GetParam())};
};

TEST_P(AccessModes, ReadSeesTheEarlierWrite) {
  int value = 0;
  auto h = rt.data(value, "value");
  std::vector<int> seen(20, -1);
  for (int round = 0; round < 10; ++round) {
    rt.submit(
        "set", [round](versa::Span<int> v) { v[0] = round * 10; }, versa::write(h));
    for (int r = 0; r < 2; ++r)
      rt.submit(
          "get", [&seen, round, r](versa::Span<const int> v) { seen[round * 2 + r] = v[0]; },
          versa::read(h));
  }
  rt.wait_all();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(seen[i], (i / 2) * 10) << "read " << i;
}

TEST_P(AccessModes, ReadsOfOneRunRunConcurrently) {
  if (GetParam() < 2) GTEST_SKIP() << "needs two workers";
  int value = 7;
  auto h = rt.data(value);
  std::atomic<int> arrived{0};
  std::atomic<int> met{0};
  for (int i = 0; i < 2; ++i)
    rt.submit(
        "reader", [&](versa::Span<const int>) { met += rendezvous(arrived, 2); }, versa::read(h));
  rt.wait_all();
  EXPECT_EQ(met.load(), 2);
}

TEST_P(AccessModes, WriteWaitsForEveryEarlierAccessAndRunsAlone) {
  int value = 0;
  auto h = rt.data(value);
  OverlapProbe probe;
  std::atomic<int> reads_done{0};
  std::vector<int> reads_seen_by_write;
  for (int round = 0; round < 5; ++round) {
    for (int r = 0; r < 4; ++r)
      rt.submit(
          "read",
          [&](versa::Span<const int>) {
            probe.enter();
            std::this_thread::sleep_for(1ms);
            ++reads_done;
            probe.leave();
          },
          versa::read(h));
    rt.submit(
        "write",
        [&](versa::Span<int> v) {
          probe.enter();
          reads_seen_by_write.push_back(reads_done.load());
          ++v[0];
          std::this_thread::sleep_for(1ms);
          probe.leave();
        },
        versa::write(h));
  }
  rt.wait_all();
  EXPECT_EQ(value, 5);
  EXPECT_EQ(reads_seen_by_write, (std::vector<int>{4, 8, 12, 16, 20}));
  // Reads may overlap each other, but a write overlaps nothing: at most one run's reads.
  EXPECT_LE(probe.max_overlap(), std::min(4, GetParam()));
}

// The earlier read keeps the old data (write_only is renamed or waits: renaming_test.cpp).
TEST_P(AccessModes, AnEarlierReadSeesTheDataBeforeAWriteOnly) {
  std::vector<int> data(4, 1);
  auto h = rt.data(data);
  std::atomic<int> sum_seen{0};
  rt.submit(
      "sum",
      [&](versa::Span<const int> v) {
        std::this_thread::sleep_for(2ms);
        int s = 0;
        for (int x : v) s += x;
        sum_seen = s;
      },
      versa::read(h));
  rt.submit(
      "overwrite",
      [](versa::Span<int> v) {
        for (int& x : v) x = 5;
      },
      versa::write_only(h));
  rt.wait_all();
  EXPECT_EQ(sum_seen.load(), 4);  // the read ran before the overwrite
  EXPECT_EQ(data, (std::vector<int>{5, 5, 5, 5}));
}

class ExclusiveRun : public testing::TestWithParam<std::tuple<int, versa::AccessMode>> {};

// Commutes of a run exclude each other; adds run in parallel into partials (reductions_test.cpp
// covers them in depth). Both wait for the accesses of other modes around them.
TEST_P(ExclusiveRun, AccessesOfARunWaitForReadsAndWrites) {
  const auto [n, mode] = GetParam();
  versa::Runtime rt{workers(n)};
  long total = 0;
  auto h = rt.data(total, "total");
  h.set_reduction(versa::sum<long>());
  OverlapProbe probe;
  std::atomic<int> writes_done{0};
  std::vector<long> seen_by_reader;
  auto update = [&](versa::Span<long> v) {
    probe.enter();
    v[0] += 1;
    std::this_thread::sleep_for(200us);
    probe.leave();
  };
  for (int round = 0; round < 3; ++round) {
    rt.submit(
        "write",
        [&](versa::Span<long> v) {
          v[0] *= 2;
          ++writes_done;
        },
        versa::write(h));
    for (int i = 0; i < 20; ++i) {
      if (mode == versa::AccessMode::commute) {
        rt.submit("commute", update, versa::commute(h));
      } else {
        rt.submit("add", update, versa::add(h));
      }
    }
    rt.submit(
        "read", [&](versa::Span<const long> v) { seen_by_reader.push_back(v[0]); }, versa::read(h));
  }
  rt.wait_all();
  // ((0*2+20)*2+20)*2+20 = 140: the run waits for the write before it, the read for the run.
  EXPECT_EQ(seen_by_reader, (std::vector<long>{20, 60, 140}));
  EXPECT_EQ(total, 140);
  if (mode == versa::AccessMode::commute) {
    EXPECT_EQ(probe.max_overlap(), 1);
  }
}

TEST_P(ExclusiveRun, TasksWithSeveralExclusiveHandlesDoNotDeadlock) {
  const int n = std::get<0>(GetParam());
  const versa::AccessMode mode = std::get<1>(GetParam());  // captured below
  versa::Runtime rt{workers(n)};
  std::vector<long> counters(4, 0);
  std::vector<versa::Handle<long>> handles;
  for (long& c : counters) handles.push_back(rt.data(c));
  for (auto& h : handles) h.set_reduction(versa::sum<long>());
  auto access = [mode](const versa::Handle<long>& h) {
    return mode == versa::AccessMode::commute ? versa::commute(h) : versa::add(h);
  };
  for (int i = 0; i < 400; ++i) {
    const int a = i % 4, b = (i * 7 + 1) % 4;
    if (a == b) continue;
    rt.submit(
        "pair",
        [](versa::Span<long> x, versa::Span<long> y) {
          ++x[0];
          ++y[0];
        },
        access(handles[a]), access(handles[b]));
  }
  rt.wait_all();
  std::vector<long> expected(4, 0);
  for (int i = 0; i < 400; ++i) {
    const int a = i % 4, b = (i * 7 + 1) % 4;
    if (a == b) continue;
    ++expected[a];
    ++expected[b];
  }
  EXPECT_EQ(counters, expected);
}

TEST_P(AccessModes, TokensOrderTasksWithoutData) {
  auto token = rt.token("order");
  std::vector<int> order;
  for (int i = 0; i < 50; ++i)
    rt.submit(
        "step", [&order, i] { order.push_back(i); }, versa::write(token));
  rt.wait_all();
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
}

TEST_P(AccessModes, TilesSeeTheirLeadingDimension) {
  // A 3x2 tile inside a 5x2 column-major matrix.
  std::vector<double> matrix(10, 0.0);
  auto tile = rt.tile(matrix.data() + 1, 3, 2, 5, "tile");
  rt.submit(
      "fill",
      [](versa::Tile<double> t) {
        for (std::size_t j = 0; j < t.cols(); ++j)
          for (std::size_t i = 0; i < t.rows(); ++i) t(i, j) = 10.0 * i + j + 1;
      },
      versa::write(tile));
  double sum = 0;
  auto result = rt.data(sum);
  rt.submit(
      "sum",
      [](versa::Tile<const double> t, versa::Span<double> s) {
        for (std::size_t j = 0; j < t.cols(); ++j)
          for (std::size_t i = 0; i < t.rows(); ++i) s[0] += t(i, j);
      },
      versa::read(tile), versa::write(result));
  rt.wait_all();
  EXPECT_EQ(matrix, (std::vector<double>{0, 1, 11, 21, 0, 0, 2, 12, 22, 0}));
  EXPECT_EQ(sum, 69.0);
}

TEST(Priorities, BreakTiesAmongReadyTasks) {
  versa::Runtime rt{workers(1)};
  // Keep the only worker busy until every task is queued, so that all compete at once.
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  rt.submit("blocker", [&] {
    started = true;
    while (!release.load()) std::this_thread::yield();
  });
  while (!started.load()) std::this_thread::yield();
  std::vector<int> order;
  for (int i = 0; i < 6; ++i)
    rt.submit(
        "task", [&order, i] { order.push_back(i); }, versa::priority(i % 3 == 0 ? 5 : 0));
  release = true;
  rt.wait_all();
  ASSERT_EQ(order.size(), 6u);
  // The prioritised tasks (0 and 3) run before the others.
  EXPECT_TRUE((order[0] == 0 || order[0] == 3) && (order[1] == 0 || order[1] == 3));
}

// Readers that a writer's finish makes ready land on that worker's own deque, where they would
// run first; prioritised tasks the main program submitted meanwhile come before them.
TEST(Priorities, SubmittedPrioritisedTasksComeBeforeTasksAFinishMadeReady) {
  versa::Runtime rt{workers(1)};
  auto item = rt.token("item");
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  rt.submit(
      "writer",
      [&] {
        started = true;
        while (!release.load()) std::this_thread::yield();
      },
      versa::write(item));
  while (!started.load()) std::this_thread::yield();
  std::vector<int> order;  // readers 0-9, prioritised tasks 10-19; one thread runs them all
  for (int i = 0; i < 10; ++i)
    rt.submit(
        "reader", [&order, i] { order.push_back(i); }, versa::read(item));
  for (int i = 10; i < 20; ++i)
    rt.submit(
        "urgent", [&order, i] { order.push_back(i); }, versa::priority(1));
  release = true;
  rt.wait_all();
  ASSERT_EQ(order.size(), 20u);
  for (int k = 0; k < 10; ++k) EXPECT_GE(order[k], 10) << "position " << k;
}

INSTANTIATE_TEST_SUITE_P(Workers, AccessModes, testing::Values(1, 2, 4, 8));
INSTANTIATE_TEST_SUITE_P(Workers, ExclusiveRun,
                         testing::Combine(testing::Values(1, 2, 4, 8),
                                          testing::Values(versa::AccessMode::commute,
                                                          versa::AccessMode::add)));

}  // namespace
