// Renaming of write_only accesses (include/versa/access_mode.hpp, src/data/handle_state.hpp): a
// write_only registered while earlier accesses use its handle gets a fresh buffer and runs at
// once; the earlier accesses keep the old data, the later ones see the new, and the user's
// memory receives the latest version at acquire, wait_all and destruction. On CPU + emulated
// devices, the renamed write runs on either side, and the data comes home from where it is.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "support/eventually.hpp"
#include "versa/versa.hpp"

namespace {

using namespace std::chrono_literals;
using versa::testing::eventually;
using versa::testing::with_emulated;
using versa::testing::workers;

long sum_of(versa::Span<const long> v) {
  long sum = 0;
  for (long x : v) sum += x;
  return sum;
}

// Rounds of a write_only, each followed by `readers` readers, then one write: every reader sees
// the write_only just before it, though each write_only is renamed while the readers before it
// still read. `where(round, r)` places the round's write_only (r = -1) and its readers.
void expect_chain(const versa::Config& config, int rounds, int readers,
                  const std::function<versa::TaskPlacement(int, int)>& where) {
  versa::Runtime rt{config};
  std::vector<long> data(16, 0);
  auto h = rt.data(data);
  std::vector<long> seen(rounds * readers, -1);
  for (int round = 0; round < rounds; ++round) {
    rt.submit(
        "produce",
        [round](versa::Span<long> v) {
          std::this_thread::sleep_for(std::chrono::microseconds(50 * (round % 3)));
          for (long& x : v) x = round;
        },
        where(round, -1), versa::write_only(h));
    for (int r = 0; r < readers; ++r)
      rt.submit(
          "consume",
          [&seen, i = round * readers + r](versa::Span<const long> v) {
            seen[i] = sum_of(v);
            std::this_thread::sleep_for(50us);
          },
          where(round, r), versa::read(h));
  }
  rt.submit(
      "update", [](versa::Span<long> v) { v[3] += 1000; }, where(rounds, -1), versa::write(h));
  rt.wait_all();
  for (int round = 0; round < rounds; ++round)
    for (int r = 0; r < readers; ++r) ASSERT_EQ(seen[round * readers + r], 16L * round) << round;
  std::vector<long> expected(16, rounds - 1);
  expected[3] += 1000;
  EXPECT_EQ(data, expected);
  EXPECT_EQ(rt.rename_memory_bytes(), 0u);
}

// A task that reads `h` until a write_only task submitted after it (and so renamed) has set every
// element to `value`; `reader` and `writer` place them.
template <class T>
void overwrite_while_read(
    versa::Runtime& rt, const versa::Handle<T>& h, T value,
    versa::TaskPlacement reader = versa::placement(versa::Placement::automatic),
    versa::TaskPlacement writer = versa::placement(versa::Placement::automatic)) {
  auto release = std::make_shared<std::atomic<bool>>(false);
  rt.submit(
      "hold", [release](versa::Span<const T>) { eventually(*release); }, reader, versa::read(h));
  rt.submit(
      "set",
      [release, value](versa::Span<T> v) {
        for (T& x : v) x = value;
        *release = true;
      },
      writer, versa::write_only(h));
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
        writer_ran_during_read = eventually(overwritten);
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
// readers between.
TEST_P(Renaming, ChainsOfRenamedWritesKeepProgramOrder) {
  expect_chain(workers(GetParam()), 50, 3,
               [](int, int) { return versa::placement(versa::Placement::automatic); });
}

// acquire() shows the latest version in the user's own memory, even while the data lives in a
// renamed buffer, and tasks after it see what the view wrote.
TEST_P(Renaming, AcquireBringsTheLatestVersionHome) {
  versa::Runtime rt{workers(GetParam())};
  std::vector<int> data(8, 0);
  auto h = rt.data(data);
  std::atomic<bool> release{false};
  rt.submit(
      "hold", [&](versa::Span<const int>) { eventually(release); }, versa::read(h));
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
    overwrite_while_read(rt, h, 3);
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
      "hold", [&](versa::Tile<const double>) { eventually(release); }, versa::read(tile));
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
        eventually(release);
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
      "hold", [&](versa::Span<const int>) { eventually(release2); }, versa::read(h));
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

// --- on CPU + emulated devices ----------------------------------------------------------------

versa::TaskPlacement on(bool device) {
  return versa::placement(device ? versa::Placement::gpu_only : versa::Placement::cpu_only);
}

// The parameter is the number of emulated devices.
class DeviceRenaming : public testing::TestWithParam<int> {
 protected:
  versa::Config config() const { return with_emulated(workers(2), GetParam()); }
};

// A write_only runs on one side (`writer_on_device`) while a task on the other still reads the
// old data, which the first task wrote there; the tasks after it read the new data on both
// sides, and wait_all brings it home.
void expect_overlap(const versa::Config& config, bool writer_on_device) {
  versa::Runtime rt{config};
  std::vector<long> data(64, 0);
  auto h = rt.data(data, "data");
  const bool reader_on_device = !writer_on_device;
  rt.submit(
      "init",
      [](versa::Span<long> v) {
        for (long& x : v) x = 2;
      },
      on(reader_on_device), versa::write(h));
  std::atomic<bool> overwritten{false};
  bool writer_ran_during_read = false;
  long old_sum = 0, device_sum = 0, cpu_sum = 0;
  rt.submit(
      "slow reader",
      [&](versa::Span<const long> v) {
        writer_ran_during_read = eventually(overwritten);
        old_sum = sum_of(v);
      },
      on(reader_on_device), versa::read(h));
  rt.submit(
      "overwrite",
      [&](versa::Span<long> v) {
        for (long& x : v) x = 5;
        overwritten = true;
      },
      on(writer_on_device), versa::write_only(h));
  rt.submit(
      "device reader", [&](versa::Span<const long> v) { device_sum = sum_of(v); }, on(true),
      versa::read(h));
  rt.submit(
      "cpu reader", [&](versa::Span<const long> v) { cpu_sum = sum_of(v); }, on(false),
      versa::read(h));
  rt.wait_all();
  EXPECT_TRUE(writer_ran_during_read);
  EXPECT_EQ(old_sum, 64 * 2);
  EXPECT_EQ(device_sum, 64 * 5);
  EXPECT_EQ(cpu_sum, 64 * 5);
  EXPECT_EQ(data, std::vector<long>(64, 5));
  EXPECT_EQ(rt.rename_memory_bytes(), 0u);
  EXPECT_EQ(rt.renamed_accesses(), 1u);
}

TEST_P(DeviceRenaming, AWriteOnlyOnADeviceRunsWhileACpuReaderReads) {
  expect_overlap(config(), true);
}

TEST_P(DeviceRenaming, AWriteOnlyOnTheCpuRunsWhileADeviceReaderReads) {
  expect_overlap(config(), false);
}

// Renamed writes alternate between the CPU and the devices, each while readers on both sides
// still read the previous value.
TEST_P(DeviceRenaming, ChainsAcrossNodesKeepProgramOrder) {
  expect_chain(config(), 40, 2,
               [](int round, int r) { return on(r < 0 ? round % 2 == 0 : r == 0); });
}

// acquire() and the handle's destruction copy a renamed instance home from the device that
// wrote it.
TEST_P(DeviceRenaming, AcquireAndDestructionBringDeviceDataHome) {
  versa::Runtime rt{config()};
  std::vector<long> data(8, 0);
  long marker = 0;
  auto done = rt.data(marker);
  {
    auto h = rt.data(data);
    overwrite_while_read(rt, h, 42L, on(false), on(true));
    {
      auto view = rt.acquire(versa::read(h));
      EXPECT_EQ(view[0], 42);
      EXPECT_EQ(data, std::vector<long>(8, 42));
    }
    // Renamed again. The marker orders the writer after the reader, and its write ends after
    // the writer's access of the handle (a task finishes its accesses in order): once it is
    // seen, nothing on the handle is pending.
    rt.submit(
        "hold",
        [](versa::Span<const long>, versa::Span<const long>) { std::this_thread::sleep_for(5ms); },
        on(false), versa::read(h), versa::read(done));
    rt.submit(
        "set",
        [](versa::Span<long> v, versa::Span<long> m) {
          for (long& x : v) x = 43;
          m[0] = 1;
        },
        on(true), versa::write_only(h), versa::write(done));
    EXPECT_EQ(rt.acquire(versa::read(done))[0], 1);
    EXPECT_EQ(data, std::vector<long>(8, 42));  // still on the device
  }  // destroyed with its data in a renamed instance on the device
  EXPECT_EQ(data, std::vector<long>(8, 43));
  rt.wait_all();
  EXPECT_EQ(rt.rename_memory_bytes(), 0u);
}

// When the copy that brings a renamed instance home from its device fails, the user's memory
// does not hold the data: wait_all reports it, and reading the handle afterwards fails.
TEST_P(DeviceRenaming, AFailedCopyHomeIsReportedAndSpoilsTheHandle) {
  versa::Config config = this->config();
  // The first copy of the device that runs the write_only is the one bringing its data home.
  for (versa::EmulatedDeviceConfig& device : config.emulated_devices) device.fail_copy_at = 1;
  versa::Runtime rt{config};
  std::vector<long> data(8, 0);
  auto h = rt.data(data, "target");
  overwrite_while_read(rt, h, 9L, on(false), on(true));
  try {
    rt.wait_all();
    ADD_FAILURE() << "wait_all did not report the failed copy";
  } catch (const versa::TaskFailure& failure) {
    EXPECT_NE(std::string(failure.what()).find("bringing handle 'target' home"), std::string::npos)
        << failure.what();
  }
  EXPECT_THROW((void)rt.acquire(versa::read(h)), versa::TaskFailure);
}

INSTANTIATE_TEST_SUITE_P(EmulatedDevices, DeviceRenaming, testing::Values(1, 2));

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
