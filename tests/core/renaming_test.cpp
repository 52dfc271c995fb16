// Renaming of write_only accesses (include/versa/access_mode.hpp, src/data/handle_state.hpp): a
// write_only registered while earlier accesses use its handle gets a fresh buffer and runs at
// once; the earlier accesses keep the old data, the later ones see the new, and the user's
// memory receives the latest version at acquire, wait_all and destruction.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using namespace std::chrono_literals;
using versa::testing::workers;

// Spins until `flag` is set or 5 s pass; returns whether it was set.
bool wait_for(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

class Renaming : public testing::TestWithParam<int> {};

// The reader waits inside its body until the write_only has run: without renaming the
// write_only would wait for the reader, and the reader would give up after 5 s.
TEST_P(Renaming, AWriteOnlyRunsWhileEarlierReadersStillRead) {
  versa::Runtime rt{workers(GetParam())};
  std::vector<int> data(64, 1);
  auto h = rt.data(data, "data");
  std::atomic<bool> overwritten{false};
  bool writer_ran_during_read = false;
  int reader_sum = 0;
  rt.submit(
      "slow reader",
      [&](versa::Span<const int> v) {
        writer_ran_during_read = wait_for(overwritten);
        for (int x : v) reader_sum += x;
      },
      versa::read(h));
  rt.submit(
      "overwrite",
      [&](versa::Span<int> v) {
        for (int& x : v) x = 7;
        overwritten = true;
      },
      versa::write_only(h));
  int later_sum = 0;
  rt.submit(
      "later reader",
      [&](versa::Span<const int> v) {
        for (int x : v) later_sum += x;
      },
      versa::read(h));
  rt.wait_all();
  EXPECT_TRUE(writer_ran_during_read);
  EXPECT_EQ(reader_sum, 64);     // the old data
  EXPECT_EQ(later_sum, 64 * 7);  // the new data
  EXPECT_EQ(data, std::vector<int>(64, 7));
  EXPECT_EQ(rt.rename_memory_bytes(), 0u);
}

// Several renamed write_onlys in a row (each while the previous one is still running), with
// readers between: every reader sees the value of the write_only just before it.
TEST_P(Renaming, ChainsOfRenamedWritesKeepProgramOrder) {
  versa::Runtime rt{workers(GetParam())};
  std::vector<long> data(16, 0);
  auto h = rt.data(data);
  constexpr int rounds = 50;
  std::vector<long> seen(rounds * 3, -1);
  for (int round = 0; round < rounds; ++round) {
    rt.submit(
        "produce",
        [round](versa::Span<long> v) {
          std::this_thread::sleep_for(std::chrono::microseconds(50 * (round % 3)));
          for (long& x : v) x = round;
        },
        versa::write_only(h));
    for (int r = 0; r < 3; ++r)
      rt.submit(
          "consume",
          [&seen, round, r](versa::Span<const long> v) {
            long sum = 0;
            for (long x : v) sum += x;
            seen[round * 3 + r] = sum;
            std::this_thread::sleep_for(100us);
          },
          versa::read(h));
  }
  rt.submit(
      "update", [](versa::Span<long> v) { v[3] += 1000; }, versa::write(h));
  rt.wait_all();
  for (int round = 0; round < rounds; ++round)
    for (int r = 0; r < 3; ++r) ASSERT_EQ(seen[round * 3 + r], 16L * round) << round;
  std::vector<long> expected(16, rounds - 1);
  expected[3] += 1000;
  EXPECT_EQ(data, expected);
  EXPECT_EQ(rt.rename_memory_bytes(), 0u);
}

// acquire() shows the latest version in the user's own memory, even while the data lives in a
// renamed buffer, and tasks after it see what the view wrote.
TEST_P(Renaming, AcquireBringsTheLatestVersionHome) {
  versa::Runtime rt{workers(GetParam())};
  std::vector<int> data(8, 0);
  auto h = rt.data(data);
  std::atomic<bool> release{false};
  rt.submit(
      "hold", [&](versa::Span<const int>) { wait_for(release); }, versa::read(h));
  rt.submit(
      "set", [](versa::Span<int> v) { v[0] = 42; }, versa::write_only(h));
  std::thread releaser([&] {
    std::this_thread::sleep_for(5ms);
    release = true;
  });
  {
    auto view = rt.acquire(versa::write(h));
    EXPECT_EQ(view[0], 42);
    EXPECT_EQ(data[0], 42);  // the view is the user's memory
    view.view()[1] = 9;
  }
  releaser.join();
  int seen = 0;
  rt.submit(
      "get", [&](versa::Span<const int> v) { seen = v[0] + v[1]; }, versa::read(h));
  rt.wait_all();
  EXPECT_EQ(seen, 51);
}

// A handle destroyed while its data is renamed takes it home first.
TEST_P(Renaming, DestroyingARenamedHandleBringsItsDataHome) {
  versa::Runtime rt{workers(GetParam())};
  std::vector<int> data(8, 0);
  {
    auto h = rt.data(data);
    std::atomic<bool> release{false};
    rt.submit(
        "hold", [&](versa::Span<const int>) { wait_for(release); }, versa::read(h));
    rt.submit(
        "set",
        [&](versa::Span<int> v) {
          for (int& x : v) x = 3;
          release = true;
        },
        versa::write_only(h));
    rt.wait_all();
  }
  EXPECT_EQ(data, std::vector<int>(8, 3));
}

// A tile of a larger matrix is renamed into a packed buffer; coming home writes its columns
// and leaves the elements between them (other tiles' data) alone.
TEST_P(Renaming, TilesComeHomeColumnByColumn) {
  versa::Runtime rt{workers(GetParam())};
  constexpr std::size_t ld = 6, rows = 4, cols = 3;
  std::vector<double> matrix(ld * cols, -1.0);
  auto tile = rt.tile(matrix.data(), rows, cols, ld);
  std::atomic<bool> release{false};
  rt.submit(
      "hold", [&](versa::Tile<const double>) { wait_for(release); }, versa::read(tile));
  rt.submit(
      "fill",
      [&](versa::Tile<double> t) {
        for (std::size_t j = 0; j < t.cols(); ++j)
          for (std::size_t i = 0; i < t.rows(); ++i) t(i, j) = static_cast<double>(10 * j + i);
        release = true;
      },
      versa::write_only(tile));
  rt.wait_all();
  for (std::size_t j = 0; j < cols; ++j)
    for (std::size_t i = 0; i < ld; ++i)
      EXPECT_EQ(matrix[j * ld + i], i < rows ? static_cast<double>(10 * j + i) : -1.0)
          << i << "," << j;
}

// A failure before a renamed write_only does not reach the tasks after it; one of the renamed
// write_only itself does.
TEST_P(Renaming, FailuresFollowProgramOrderAcrossARename) {
  versa::Runtime rt{workers(GetParam())};
  std::vector<int> data(4, 0);
  auto h = rt.data(data);
  std::atomic<bool> release{false};
  rt.submit(
      "failing writer",
      [&](versa::Span<int>) {
        wait_for(release);
        throw std::runtime_error("first");
      },
      versa::write(h));
  rt.submit(
      "overwrite",
      [&](versa::Span<int> v) {
        v[0] = 5;
        release = true;
      },
      versa::write_only(h));
  int seen = -1;
  rt.submit(
      "reader", [&](versa::Span<const int> v) { seen = v[0]; }, versa::read(h));
  EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  EXPECT_EQ(seen, 5);
  EXPECT_EQ(data[0], 5);

  std::atomic<bool> release2{false};
  rt.submit(
      "hold", [&](versa::Span<const int>) { wait_for(release2); }, versa::read(h));
  rt.submit(
      "failing overwrite",
      [&](versa::Span<int>) {
        release2 = true;
        throw std::runtime_error("second");
      },
      versa::write_only(h));
  bool ran = false;
  rt.submit(
      "cancelled reader", [&](versa::Span<const int>) { ran = true; }, versa::read(h));
  EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  EXPECT_FALSE(ran);
  EXPECT_THROW((void)rt.acquire(versa::read(h)), versa::TaskFailure);
}

INSTANTIATE_TEST_SUITE_P(Workers, Renaming, testing::Values(2, 4, 8));

// Whether a write_only after a 5 ms reader of its handle ran after the reader ended.
bool write_only_waited_for_reader(const versa::Config& config) {
  versa::Runtime rt{config};
  std::vector<int> data(4, 1);
  auto h = rt.data(data);
  std::atomic<bool> reader_done{false};
  bool writer_saw_reader_done = false;
  rt.submit(
      "reader",
      [&](versa::Span<const int>) {
        std::this_thread::sleep_for(5ms);
        reader_done = true;
      },
      versa::read(h));
  rt.submit(
      "overwrite", [&](versa::Span<int>) { writer_saw_reader_done = reader_done.load(); },
      versa::write_only(h));
  rt.wait_all();
  EXPECT_EQ(rt.rename_memory_bytes(), 0u);
  return writer_saw_reader_done;
}

// Without a budget, write_only waits for the earlier accesses as write does.
TEST(RenamingOff, AWriteOnlyWaitsWhenRenamingIsDisabled) {
  versa::Config config = workers(2);
  config.rename_memory_limit = 0;
  EXPECT_TRUE(write_only_waited_for_reader(config));
}

TEST(RenamingOff, ABudgetTooSmallForTheHandleLeavesItInPlace) {
  versa::Config config = workers(2);
  config.rename_memory_limit = 8;  // bytes: less than the handle
  EXPECT_TRUE(write_only_waited_for_reader(config));
}

}  // namespace
