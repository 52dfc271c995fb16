// Host access (Runtime::acquire) takes its place in program order like a task: it waits for the
// conflicting tasks submitted before it, and the conflicting tasks submitted after it wait until
// the HostView is released.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "support/eventually.hpp"
#include "versa/versa.hpp"

namespace {

using namespace std::chrono_literals;

using versa::testing::eventually;
using versa::testing::workers;

// How long a test lets tasks that must stay blocked have to run anyway before it checks that
// they did not. Long enough for an idle worker to pick a task up many times over.
constexpr auto blocked_window = 20ms;

class AcquireTest : public testing::TestWithParam<int> {
 protected:
  versa::Runtime rt{workers(GetParam())};
};

TEST_P(AcquireTest, ReadAcquireWaitsForTheTasksSubmittedBeforeIt) {
  constexpr int elements = 64;
  constexpr int rounds = 12;
  std::vector<long> values(elements, 1);
  auto h = rt.data(values, "values");
  // Each round depends on the previous one's result (x -> 3x + round), so a reordered or missed
  // round changes the values.
  for (int round = 0; round < rounds; ++round) {
    rt.submit(
        "round",
        [round](versa::Span<long> v) {
          std::this_thread::sleep_for(100us);
          for (long& e : v) e = 3 * e + round;
        },
        versa::write(h));
  }
  long expected = 1;
  for (int round = 0; round < rounds; ++round) expected = 3 * expected + round;

  auto view = rt.acquire(versa::read(h));
  ASSERT_EQ(view->size(), static_cast<std::size_t>(elements));
  for (int i = 0; i < elements; ++i) EXPECT_EQ(view[i], expected) << "element " << i;
  view.release();
  rt.wait_all();
}

TEST_P(AcquireTest, AcquireDoesNotWaitForTasksOnOtherHandles) {
  // Two workers are one thread and the waiting thread, which acquire() does not lend.
  if (GetParam() < 3) GTEST_SKIP() << "the blocked task occupies the only worker thread";
  int x = 0;
  auto h = rt.data(x, "x");
  std::atomic<bool> released{false};
  std::atomic<bool> blocker_timed_out{false};
  rt.submit("blocker", [&] { blocker_timed_out = !eventually([&] { return released.load(); }); });
  rt.submit(
      "set x", [](versa::Span<int> v) { v[0] = 5; }, versa::write(h));
  {
    auto view = rt.acquire(versa::read(h));
    EXPECT_EQ(view[0], 5);
  }
  released = true;
  rt.wait_all();
  EXPECT_FALSE(blocker_timed_out.load()) << "acquire waited for a task on another handle";
}

TEST_P(AcquireTest, WriteAcquireHoldsBackLaterReadersUntilReleased) {
  int x = 0;
  auto h = rt.data(x, "x");
  rt.submit(
      "init", [](versa::Span<int> v) { v[0] = 1; }, versa::write_only(h));
  std::atomic<int> seen{-1};
  {
    auto view = rt.acquire(versa::write(h));
    EXPECT_EQ(view[0], 1);
    rt.submit(
        "reader", [&](versa::Span<const int> v) { seen = v[0]; }, versa::read(h));
    std::this_thread::sleep_for(blocked_window);
    EXPECT_EQ(seen.load(), -1) << "a reader ran while the host held write access";
    view[0] = 7;
  }
  rt.wait_all();
  EXPECT_EQ(seen.load(), 7);
  EXPECT_EQ(x, 7);
}

TEST_P(AcquireTest, ReadAcquireLetsReadersRunButHoldsBackWriters) {
  int x = 3;
  auto h = rt.data(x, "x");
  auto view = rt.acquire(versa::read(h));
  std::atomic<int> seen{-1};
  std::atomic<bool> writer_ran{false};
  rt.submit(
      "reader", [&](versa::Span<const int> v) { seen = v[0]; }, versa::read(h));
  rt.submit(
      "writer",
      [&](versa::Span<int> v) {
        v[0] = 4;
        writer_ran = true;
      },
      versa::write(h));
  EXPECT_TRUE(eventually([&] { return seen.load() == 3; }))
      << "a reader waited for the host's read access";
  std::this_thread::sleep_for(blocked_window);
  EXPECT_FALSE(writer_ran.load()) << "a writer ran while the host held read access";
  EXPECT_EQ(view[0], 3);
  view.release();
  rt.wait_all();
  EXPECT_TRUE(writer_ran.load());
  EXPECT_EQ(x, 4);
}

TEST_P(AcquireTest, MovedHostViewReleasesOnce) {
  int x = 0;
  auto h = rt.data(x, "x");
  std::atomic<int> seen{-1};
  {
    auto first = rt.acquire(versa::write(h));
    first[0] = 2;
    versa::HostView<versa::Span<int>> second(std::move(first));
    first.release();  // moved-from: must not end the access
    rt.submit(
        "reader", [&](versa::Span<const int> v) { seen = v[0]; }, versa::read(h));
    std::this_thread::sleep_for(blocked_window);
    EXPECT_EQ(seen.load(), -1) << "releasing a moved-from HostView ended the access";
    second[0] = 6;
  }
  rt.wait_all();
  EXPECT_EQ(seen.load(), 6);
}

TEST_P(AcquireTest, TileAcquireSeesTheTileShape) {
  // A 3 x 2 tile inside a column-major block with leading dimension 4; row 3 is padding.
  std::vector<double> block(8, -1.0);
  auto tile = rt.tile(block.data(), 3, 2, 4, "tile");
  rt.submit(
      "fill",
      [](versa::Tile<double> t) {
        for (std::size_t j = 0; j < t.cols(); ++j)
          for (std::size_t i = 0; i < t.rows(); ++i) t(i, j) = static_cast<double>(10 * i + j);
      },
      versa::write(tile));
  auto view = rt.acquire(versa::read(tile));
  EXPECT_EQ(view->rows(), 3u);
  EXPECT_EQ(view->cols(), 2u);
  EXPECT_EQ(view->ld(), 4u);
  for (std::size_t j = 0; j < 2; ++j)
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(view.view()(i, j), 10.0 * i + j);
  EXPECT_EQ(block[3], -1.0);
  EXPECT_EQ(block[7], -1.0);
}

TEST_P(AcquireTest, HostCommuteAcquireExcludesCommuteTasks) {
  constexpr int tasks = 100;
  long total = 0;
  auto h = rt.data(total, "total");
  std::atomic<bool> inside{false};
  std::atomic<int> overlaps{0};
  auto increment = [&](versa::Span<long> v) {
    if (inside.exchange(true)) ++overlaps;
    ++v[0];
    inside = false;
  };
  for (int i = 0; i < tasks / 2; ++i) rt.submit("increment", increment, versa::commute(h));
  {
    auto view = rt.acquire(versa::commute(h));
    if (inside.exchange(true)) ++overlaps;
    std::this_thread::sleep_for(1ms);
    view[0] += 1000;
    inside = false;
  }
  for (int i = 0; i < tasks / 2; ++i) rt.submit("increment", increment, versa::commute(h));
  rt.wait_all();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(total, tasks + 1000);
}

TEST_P(AcquireTest, TokenAcquireGatesTheTasksSubmittedAfterIt) {
  constexpr int gated = 1000;
  auto gate = rt.token("gate");
  std::atomic<int> ran{0};
  {
    auto hold = rt.acquire(versa::write(gate));
    for (int i = 0; i < gated; ++i)
      rt.submit(
          "gated", [&] { ran.fetch_add(1, std::memory_order_relaxed); }, versa::read(gate));
    std::this_thread::sleep_for(blocked_window);
    EXPECT_EQ(ran.load(), 0) << "tasks ran before the gate was released";
  }
  rt.wait_all();
  EXPECT_EQ(ran.load(), gated);
}

TEST_P(AcquireTest, TokenWritersHeldAtAGateRunInSubmissionOrderAfterIt) {
  constexpr int gated = 200;
  auto gate = rt.token("gate");
  std::vector<int> order;  // appended to only by tasks that write the gate: one at a time
  {
    auto hold = rt.acquire(versa::write(gate));
    for (int i = 0; i < gated; ++i)
      rt.submit(
          "gated writer", [&order, i] { order.push_back(i); }, versa::write(gate));
    std::this_thread::sleep_for(blocked_window);
    EXPECT_TRUE(order.empty()) << "tasks ran before the gate was released";
  }
  rt.wait_all();
  ASSERT_EQ(order.size(), static_cast<std::size_t>(gated));
  for (int i = 0; i < gated; ++i) EXPECT_EQ(order[i], i);
}

INSTANTIATE_TEST_SUITE_P(Workers, AcquireTest, testing::Values(1, 2, 4, 8));

}  // namespace
