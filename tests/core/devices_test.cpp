// Heterogeneous execution on CPU + emulated accelerators: coherence of replicas after every
// access mode on every node, caching of device copies, eviction when the working set exceeds
// device memory, write-back at wait_all, acquire and handle destruction, placement rules, fault
// injection and refusal at submit.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "support/eventually.hpp"
#include "versa/versa.hpp"

namespace {

using versa::Placement;
using versa::Span;

constexpr std::size_t n = 256;  // doubles per handle: 2 KiB
constexpr std::size_t bytes = n * sizeof(double);

versa::Config one_device(std::size_t memory = 1 << 20) {
  return versa::testing::with_emulated(versa::testing::workers(2), 1, memory);
}

std::vector<double> iota(double start) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// What wait_all reports: the TaskFailure's message, or "" when nothing failed.
std::string failure_of(versa::Runtime& rt, std::string* task_name = nullptr) {
  try {
    rt.wait_all();
  } catch (const versa::TaskFailure& failure) {
    if (task_name) *task_name = failure.task_name();
    return failure.what();
  }
  return "";
}

// Where a one-off task runs: the CPU or the (single) emulated device.
versa::TaskPlacement on(bool device) {
  return versa::placement(device ? Placement::gpu_only : Placement::cpu_only);
}

// Submits `passes` passes over a ring of handles on the device: each task adds handle k, plus
// one, into handle k + 1.
void shift_ring(versa::Runtime& rt, const std::vector<versa::Handle<double>>& handles, int passes) {
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t k = 0; k < handles.size(); ++k)
      rt.submit(
          "shift",
          [](Span<const double> a, Span<double> b) {
            for (std::size_t i = 0; i < b.size(); ++i) b[i] += a[i] + 1;
          },
          on(true), versa::read(handles[k]), versa::write(handles[(k + 1) % handles.size()]));
}

// What shift_ring leaves in `count` handles that start as iota(0), computed in order.
std::vector<std::vector<double>> shifted_ring(std::size_t count, int passes) {
  std::vector<std::vector<double>> expected(count, iota(0));
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t k = 0; k < count; ++k)
      for (std::size_t i = 0; i < n; ++i) expected[(k + 1) % count][i] += expected[k][i] + 1;
  return expected;
}

// Submits a task with `mode` on `h` at the chosen node. It records what it saw (element sum
// before its update) in `seen` and updates the data: write/commute/add add 1 to every element,
// write_only stores 1000 + i.
void access(versa::Runtime& rt, const versa::Handle<double>& h, versa::AccessMode mode, bool device,
            double* seen) {
  auto sum = [](auto x) { return std::accumulate(x.begin(), x.end(), 0.0); };
  switch (mode) {
    case versa::AccessMode::read:
      rt.submit(
          "read", [=](Span<const double> x) { *seen = sum(x); }, on(device), versa::read(h));
      break;
    case versa::AccessMode::write_only:
      rt.submit(
          "write_only",
          [=](Span<double> x) {
            for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1000.0 + static_cast<double>(i);
          },
          on(device), versa::write_only(h));
      break;
    default: {
      auto body = [=](Span<double> x) {
        *seen = sum(x);
        for (double& e : x) e += 1;
      };
      if (mode == versa::AccessMode::write) rt.submit("write", body, on(device), versa::write(h));
      if (mode == versa::AccessMode::commute)
        rt.submit("commute", body, on(device), versa::commute(h));
      if (mode == versa::AccessMode::add) rt.submit("add", body, on(device), versa::add(h));
    }
  }
}

struct ModeCase {
  versa::AccessMode mode;
  bool data_on_device;  // where the previous write left the data
  bool run_on_device;   // where the access runs
};

class DeviceCoherence : public testing::TestWithParam<ModeCase> {};

// The data is written on one node, accessed with every mode on every node, then read on both
// nodes and on the host: everyone sees the same, up-to-date values.
TEST_P(DeviceCoherence, EveryModeOnEveryNodeSeesAndLeavesTheRightData) {
  const ModeCase c = GetParam();
  versa::Runtime rt{one_device()};
  std::vector<double> data = iota(0);
  auto h = rt.data(data, "x");
  h.set_reduction(versa::sum<double>());
  double ignored = 0, seen = -1, on_cpu = -1, on_device = -1;
  access(rt, h, versa::AccessMode::write, c.data_on_device, &ignored);  // every element + 1
  access(rt, h, c.mode, c.run_on_device, &seen);
  access(rt, h, versa::AccessMode::read, false, &on_cpu);
  access(rt, h, versa::AccessMode::read, true, &on_device);
  std::vector<double> expected = iota(1);
  const double before = std::accumulate(expected.begin(), expected.end(), 0.0);
  if (c.mode == versa::AccessMode::write_only) {
    expected = iota(1000);
  } else if (c.mode != versa::AccessMode::read) {
    for (double& e : expected) e += 1;
  }
  const double after = std::accumulate(expected.begin(), expected.end(), 0.0);
  {
    auto view = rt.acquire(versa::read(h));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(view[i], expected[i]) << "element " << i;
  }
  rt.wait_all();
  // A lone add runs in place, on the data, where the data is; elsewhere it is renamed rather
  // than move the data, and sees a partial holding the identity.
  if (c.mode == versa::AccessMode::add && c.data_on_device != c.run_on_device) {
    EXPECT_EQ(seen, 0.0);
  } else if (c.mode != versa::AccessMode::write_only) {
    EXPECT_EQ(seen, before);
  }
  EXPECT_EQ(on_cpu, after);
  EXPECT_EQ(on_device, after);
  EXPECT_EQ(data, expected);
  const auto stats = rt.statistics();
  EXPECT_EQ(stats[1].tasks, 1u + c.data_on_device + c.run_on_device);
}

std::vector<ModeCase> all_mode_cases() {
  std::vector<ModeCase> cases;
  for (auto mode :
       {versa::AccessMode::read, versa::AccessMode::write, versa::AccessMode::write_only,
        versa::AccessMode::commute, versa::AccessMode::add})
    for (bool from : {false, true})
      for (bool to : {false, true}) cases.push_back({mode, from, to});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Modes, DeviceCoherence, testing::ValuesIn(all_mode_cases()),
                         [](const testing::TestParamInfo<ModeCase>& info) {
                           return std::string(versa::to_string(info.param.mode)) + "_from_" +
                                  (info.param.data_on_device ? "device" : "cpu") + "_on_" +
                                  (info.param.run_on_device ? "device" : "cpu");
                         });

TEST(Devices, DeviceCopiesAreCachedAndWriteOnlyFetchesNothing) {
  versa::Runtime rt{one_device()};
  std::vector<double> data = iota(0);
  auto h = rt.data(data);
  double seen = 0;
  access(rt, h, versa::AccessMode::read, true, &seen);
  access(rt, h, versa::AccessMode::read, true, &seen);
  rt.wait_all();
  EXPECT_EQ(rt.statistics()[1].bytes_to_device, bytes) << "the second read reuses the copy";
  access(rt, h, versa::AccessMode::write, false, &seen);  // invalidates the device copy
  access(rt, h, versa::AccessMode::read, true, &seen);
  rt.wait_all();
  EXPECT_EQ(rt.statistics()[1].bytes_to_device, 2 * bytes);
  access(rt, h, versa::AccessMode::write_only, true, &seen);
  rt.wait_all();
  EXPECT_EQ(rt.statistics()[1].bytes_to_device, 2 * bytes) << "write_only fetched the old data";
  EXPECT_EQ(rt.statistics()[1].bytes_to_host, bytes) << "wait_all brings the result home";
  EXPECT_EQ(data, iota(1000));
}

// A handle without write-back: wait_all leaves its device copy where it is and the user's
// memory as it was; a later task still sees the device's values; acquire brings them home; and
// destroying the handle copies nothing.
TEST(Devices, DataWithoutWriteBackStaysOnTheDeviceUntilAcquired) {
  versa::Runtime rt{one_device()};
  std::vector<double> data = iota(0), kept = iota(0);
  const std::vector<double> once = iota(1);
  {
    auto h = rt.data(data, "intermediate");
    h.set_write_back(false);
    double seen = 0;
    access(rt, h, versa::AccessMode::write, true, &seen);
    rt.wait_all();
    EXPECT_EQ(data, iota(0)) << "wait_all brought it home";
    EXPECT_EQ(rt.statistics()[1].bytes_to_host, 0u);
    double sum = 0;
    access(rt, h, versa::AccessMode::read, false, &sum);  // on the CPU: brought home to it
    rt.wait_all();
    EXPECT_EQ(sum, std::accumulate(once.begin(), once.end(), 0.0));
    EXPECT_EQ(rt.statistics()[1].bytes_to_host, bytes) << "a CPU task needs it";
    access(rt, h, versa::AccessMode::write, true, &seen);  // changed on the device again
    rt.wait_all();
    EXPECT_EQ(data, once) << "wait_all left the second change on the device";
    {
      auto view = rt.acquire(versa::read(h));
      EXPECT_EQ(std::vector<double>(view->begin(), view->end()), iota(2));
    }
    EXPECT_EQ(data, iota(2));
    access(rt, h, versa::AccessMode::write, true, &seen);
    rt.wait_all();
  }  // destroyed: the device's last change is dropped
  EXPECT_EQ(data, iota(2));
  EXPECT_EQ(rt.statistics()[1].bytes_to_host, 2 * bytes);
  // The default still writes back, at wait_all and at destruction.
  {
    auto h = rt.data(kept, "result");
    double seen = 0;
    access(rt, h, versa::AccessMode::write, true, &seen);
  }
  EXPECT_EQ(kept, iota(1));
  EXPECT_THROW(versa::Handle<double>{}.set_write_back(false), std::invalid_argument);
}

// copy_home brings a device's result home while later tasks still run: a CPU task submitted
// after it waits (up to a minute) for the copy to show in the statistics, which without it would
// come only at wait_all, after that task. The device keeps its copy for a later reader, a later
// writer's result comes home at wait_all, and an empty handle is refused.
TEST(Devices, CopyHomeOverlapsTheTasksAfterIt) {
  versa::Runtime rt{one_device()};
  std::vector<double> data = iota(0);
  auto h = rt.data(data, "result");
  double seen = 0;
  access(rt, h, versa::AccessMode::write, true, &seen);
  rt.copy_home(h);
  std::atomic<bool> came_home{false};
  rt.submit(
      "watch",
      [&rt, &came_home] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
        while (rt.statistics()[1].bytes_to_host < bytes &&
               std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        came_home = rt.statistics()[1].bytes_to_host >= bytes;
      },
      on(false));
  double sum = 0;
  access(rt, h, versa::AccessMode::read, true, &sum);
  rt.wait_all();
  EXPECT_TRUE(came_home) << "the copy home waited for wait_all";
  EXPECT_EQ(data, iota(1));
  EXPECT_EQ(sum, std::accumulate(data.begin(), data.end(), 0.0));
  EXPECT_EQ(rt.statistics()[1].bytes_to_device, bytes) << "the device kept its copy";
  EXPECT_EQ(rt.statistics()[1].bytes_to_host, bytes) << "nothing changed after the copy home";
  access(rt, h, versa::AccessMode::write, true, &seen);
  rt.copy_home(h);
  access(rt, h, versa::AccessMode::write, true, &seen);
  rt.wait_all();
  EXPECT_EQ(data, iota(3));
  EXPECT_EQ(rt.statistics()[1].bytes_to_host, 3 * bytes);
  EXPECT_EQ(rt.statistics()[0].tasks, 3u) << "the watch and the two copies home";
  EXPECT_THROW(rt.copy_home(versa::Handle<double>{}), std::invalid_argument);
}

// A task whose data is on the device starts there while the tasks queued before it wait for
// their copies over a slow link, instead of waiting behind them: the device computes while its
// link is busy (on a GPU fed over PCIe, the tiled Cholesky's next steps run while the last tiles
// arrive).
TEST(Devices, TaskWithItsDataOnTheDeviceDoesNotWaitBehindCopies) {
  versa::Config config = versa::testing::workers(2);
  versa::EmulatedDeviceConfig device;
  device.streams = 1;                                               // 2 tasks in flight
  device.bandwidth_bytes_per_s = static_cast<double>(bytes) / 0.1;  // a copy in 100 ms
  config.emulated_devices.push_back(device);
  versa::Runtime rt{config};
  std::vector<double> near = iota(0);
  auto near_handle = rt.data(near, "near");
  const auto add_one = [](Span<double> v) {
    for (double& x : v) x += 1;
  };
  rt.submit("produce", add_one, on(true), versa::write(near_handle));
  rt.wait_all();  // home, and still valid on the device
  const std::uint64_t copied_in = rt.statistics()[1].bytes_to_device;

  std::vector<std::vector<double>> far(4, iota(0));
  std::vector<versa::Handle<double>> far_handles;
  for (auto& data : far) far_handles.push_back(rt.data(data, "far"));
  std::atomic<int> far_ran{0};
  int far_ran_before = -1;
  for (const auto& h : far_handles)
    rt.submit(
        "far", [&far_ran](Span<const double>) { far_ran.fetch_add(1); }, on(true), versa::read(h));
  rt.submit(
      "near",
      [&](Span<double> v) {
        far_ran_before = far_ran.load();
        for (double& x : v) x += 1;
      },
      on(true), versa::write(near_handle));
  rt.wait_all();
  EXPECT_EQ(far_ran_before, 0) << "the task with its data on the device waited for copies";
  EXPECT_EQ(far_ran.load(), 4);
  EXPECT_EQ(rt.statistics()[1].bytes_to_device - copied_in, 4 * bytes) << "near was not copied";
  EXPECT_EQ(near, iota(2));
}

// Without write-back, data evicted from a full device still goes home (tasks need it again),
// and the tasks' results equal the sequential run's.
// The same when a write_only was renamed (registered while a task on the old data is pending):
// the data is in the renamed instance, which neither wait_all nor the handle's destruction brings
// home, and which acquire still does.
TEST(Devices, RenamedDataWithoutWriteBackStaysOnTheDeviceUntilAcquired) {
  versa::Runtime rt{one_device()};
  std::vector<double> data = iota(0);
  // Renames `h`: a task that reads it waits for `go`, a write_only registered meanwhile makes
  // it `value` on the device.
  const auto renamed_write = [&rt](versa::Handle<double>& h, double value) {
    std::atomic<bool> go{false};
    rt.submit(
        "read",
        [&go](Span<const double>) {
          while (!go.load()) std::this_thread::yield();
        },
        on(true), versa::read(h));
    rt.submit(
        "make", [value](Span<double> d) { std::fill(d.begin(), d.end(), value); }, on(true),
        versa::write_only(h));
    go = true;
    rt.wait_all();
  };
  {
    auto h = rt.data(data, "intermediate");
    h.set_write_back(false);
    renamed_write(h, 7);
    EXPECT_EQ(rt.renamed_accesses(), 1u);
    EXPECT_EQ(data, iota(0)) << "wait_all brought it home";
    EXPECT_EQ(rt.statistics()[1].bytes_to_host, 0u);
    {
      auto view = rt.acquire(versa::read(h));
      EXPECT_EQ(std::vector<double>(view->begin(), view->end()), std::vector<double>(n, 7));
    }
    EXPECT_EQ(data, std::vector<double>(n, 7));
    renamed_write(h, 8);
    EXPECT_EQ(rt.renamed_accesses(), 2u);
  }  // destroyed: the device's last change is dropped
  EXPECT_EQ(data, std::vector<double>(n, 7));
  EXPECT_EQ(rt.statistics()[1].bytes_to_host, bytes);
  // With write-back, both bring the data home.
  std::vector<double> kept = iota(0);
  {
    auto h = rt.data(kept, "result");
    renamed_write(h, 9);
    EXPECT_EQ(kept, std::vector<double>(n, 9));
    renamed_write(h, 10);
    EXPECT_EQ(rt.renamed_accesses(), 4u);
  }
  EXPECT_EQ(kept, std::vector<double>(n, 10));
}

// A handle may outlive its runtime: the runtime's end brings its data home (from a renamed
// instance, from a device, with its partial sums), and destroying the handle later asks
// nothing of the runtime (it once called into the freed runtime when renamed).
TEST(Devices, AHandleMayOutliveItsRuntime) {
  for (const bool with_device : {false, true}) {
    std::vector<double> renamed(n, 0), on_device(n, 0), summed(n, 0);
    versa::Handle<double> h_renamed, h_on_device, h_summed, h_scratch;
    {
      versa::Runtime rt{with_device ? one_device() : versa::testing::workers(2)};
      h_renamed = rt.data(renamed, "renamed");
      h_on_device = rt.data(on_device, "on device");
      h_summed = rt.data(summed, "summed");
      h_summed.set_reduction(versa::sum<double>());
      h_scratch = rt.scratch<double>(n, "scratch");  // owns its memory, and the count of it
      const auto where = with_device ? on(true) : versa::TaskPlacement{};
      std::atomic<bool> go{false};
      rt.submit(
          "read",
          [&go](Span<const double>) {
            while (!go.load()) std::this_thread::yield();
          },
          where, versa::read(h_renamed));
      rt.submit(  // a new instance: the read is pending
          "make", [](Span<double> d) { std::fill(d.begin(), d.end(), 5.0); }, where,
          versa::write_only(h_renamed));
      EXPECT_EQ(rt.renamed_accesses(), 1u);
      go = true;
      rt.submit(
          "write", [](Span<double> d) { std::fill(d.begin(), d.end(), 6.0); }, where,
          versa::write(h_on_device));
      for (int i = 0; i < 3; ++i)
        rt.submit(
            "add", [](Span<double> d) { d[0] += 1; }, where, versa::add(h_summed));
      rt.submit(
          "scratch", [](Span<double> d) { d[0] = 1; }, where, versa::write(h_scratch));
    }  // no wait_all: the runtime's end waits
    EXPECT_EQ(renamed, std::vector<double>(n, 5.0)) << with_device;
    EXPECT_EQ(on_device, std::vector<double>(n, 6.0)) << with_device;
    EXPECT_EQ(summed[0], 3.0) << with_device;
    h_renamed = {};
    h_on_device = {};
    h_summed = {};
    h_scratch = {};
    EXPECT_EQ(renamed, std::vector<double>(n, 5.0)) << with_device;
  }
}

TEST(Devices, DataWithoutWriteBackSurvivesEviction) {
  versa::Runtime rt{one_device(4 * bytes)};
  std::vector<std::vector<double>> data(16, iota(0));
  std::vector<versa::Handle<double>> handles;
  for (auto& d : data) {
    handles.push_back(rt.data(d));
    handles.back().set_write_back(false);
  }
  shift_ring(rt, handles, 3);
  rt.wait_all();
  EXPECT_GT(rt.statistics()[1].evictions, 20u);
  const std::vector<std::vector<double>> expected = shifted_ring(handles.size(), 3);
  for (std::size_t k = 0; k < handles.size(); ++k) {
    auto view = rt.acquire(versa::read(handles[k]));
    EXPECT_EQ(std::vector<double>(view->begin(), view->end()), expected[k]) << "handle " << k;
  }
}

// Data declared zero: a device fills its copy with zeros instead of copying it, until the
// host's copy changes (a CPU task's change, or a copy home); then it copies.
TEST(Devices, DataDeclaredZeroIsFilledOnTheDeviceUntilTheHostChangesIt) {
  versa::Runtime rt{one_device()};
  std::vector<double> a(n, 0.0), b(n, 0.0);
  auto ha = rt.data(a, "a"), hb = rt.data(b, "b");
  ha.declare_zero();
  hb.declare_zero();
  double seen = -1;
  access(rt, ha, versa::AccessMode::commute, true, &seen);  // adds 1 on the device
  rt.wait_all();
  EXPECT_EQ(seen, 0.0);
  EXPECT_EQ(rt.statistics()[1].bytes_to_device, 0u);
  EXPECT_EQ(rt.statistics()[1].bytes_zeroed, bytes);
  EXPECT_EQ(a, std::vector<double>(n, 1.0));
  // "b" changes on the CPU first: the device must copy it.
  access(rt, hb, versa::AccessMode::commute, false, &seen);
  access(rt, hb, versa::AccessMode::write, true, &seen);
  rt.wait_all();
  EXPECT_EQ(seen, static_cast<double>(n));
  EXPECT_EQ(rt.statistics()[1].bytes_to_device, bytes);
  EXPECT_EQ(b, std::vector<double>(n, 2.0));
  // "a" came home at wait_all: a device that needs it again copies it.
  access(rt, ha, versa::AccessMode::write, false, &seen);
  rt.wait_all();
  std::vector<double> c(n, 0.0);
  {
    auto hc = rt.data(c, "c");
    hc.declare_zero();
    rt.submit(
        "a into c",
        [](Span<const double> x, Span<double> y) { std::copy(x.begin(), x.end(), y.begin()); },
        on(true), versa::read(ha), versa::write(hc));
  }
  EXPECT_EQ(c, std::vector<double>(n, 2.0));
  EXPECT_EQ(rt.statistics()[1].bytes_to_device, 2 * bytes) << "\"a\" changed at home";
  EXPECT_EQ(rt.statistics()[1].bytes_zeroed, 2 * bytes) << "\"c\" is zero";
}

// A tile declared zero, with a leading dimension larger than its rows, filled on the device
// (where it is packed) and written home into its place; declared too late, or empty, refused.
TEST(Devices, TileDeclaredZeroAndDeclarationsRefused) {
  versa::Runtime rt{one_device()};
  constexpr std::size_t rows = 6, cols = 5, ld = 8;
  std::vector<double> matrix(ld * cols, 0.0);
  for (std::size_t j = 0; j < cols; ++j)
    for (std::size_t i = rows; i < ld; ++i) matrix[j * ld + i] = 7;  // outside the tile
  auto tile = rt.tile(matrix.data(), rows, cols, ld, "tile");
  tile.declare_zero();
  rt.submit(
      "count",
      [](versa::Tile<double> t) {
        for (std::size_t j = 0; j < t.cols(); ++j)
          for (std::size_t i = 0; i < t.rows(); ++i) t(i, j) += static_cast<double>(i + 10 * j);
      },
      on(true), versa::commute(tile));
  rt.wait_all();
  EXPECT_EQ(rt.statistics()[1].bytes_to_device, 0u);
  for (std::size_t j = 0; j < cols; ++j)
    for (std::size_t i = 0; i < ld; ++i)
      EXPECT_EQ(matrix[j * ld + i], i < rows ? static_cast<double>(i + 10 * j) : 7.0)
          << i << ", " << j;
  // Used already (its copy lives on the device): refused, naming it.
  try {
    tile.declare_zero();
    ADD_FAILURE() << "declared zero after use";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("'tile'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(versa::Handle<double>{}.declare_zero(), std::invalid_argument);
}

TEST(Devices, WorkingSetLargerThanDeviceMemoryCompletesThroughEviction) {
  // 32 handles of 2 KiB on a device with room for 4: every pass evicts, owned copies go home.
  versa::Runtime rt{one_device(4 * bytes)};
  std::vector<std::vector<double>> data(32, iota(0));
  std::vector<versa::Handle<double>> handles;
  for (auto& d : data) handles.push_back(rt.data(d));
  shift_ring(rt, handles, 5);
  rt.wait_all();
  EXPECT_EQ(data, shifted_ring(handles.size(), 5));
  const auto stats = rt.statistics()[1];
  EXPECT_EQ(stats.tasks, 5u * 32u);
  EXPECT_GT(stats.evictions, 100u);
  EXPECT_GT(stats.bytes_to_host, 100u * bytes) << "owned replicas are written home when evicted";
}

// A device with room for two handles holds "a", which a later task will modify again, and "b",
// which no task waits for and which the host holds too. Making room for "c" drops "b", though
// "a" is older, rather than writing "a" home only to change it again on the device. The first
// task waits until all four are submitted: a device that made room before the last one was
// would know of no task waiting for "a" (under ThreadSanitizer, on two busy cores, it did).
TEST(Devices, EvictionDropsWhatNoTaskWaitsForFirst) {
  versa::Runtime rt{one_device(2 * bytes)};
  std::vector<double> a = iota(0), b = iota(100), c = iota(200);
  double seen = 0;
  std::atomic<bool> submitted{false};
  auto ha = rt.data(a, "a"), hb = rt.data(b, "b"), hc = rt.data(c, "c");
  versa::Token order = rt.token("order");  // the four tasks run one after the other
  auto bump = [](Span<double> x) {
    for (double& e : x) e += 1;
  };
  rt.submit(
      "bump a",
      [&submitted, bump](Span<double> x) {
        EXPECT_TRUE(versa::testing::eventually(submitted));
        bump(x);
      },
      on(true), versa::write(ha), versa::write(order));
  rt.submit(
      "read b", [&seen](Span<const double> x) { seen = x[1]; }, on(true), versa::read(hb),
      versa::write(order));
  rt.submit("bump c", bump, on(true), versa::write(hc), versa::write(order));
  rt.submit(
      "add c to a",
      [](Span<double> x, Span<const double> y) {
        for (double& e : x) e += y[0];
      },
      on(true), versa::write(ha), versa::read(hc), versa::write(order));
  submitted = true;
  rt.wait_all();
  EXPECT_EQ(seen, 101.0);
  EXPECT_EQ(a, iota(202));
  EXPECT_EQ(c, iota(201));
  const versa::DeviceStatistics stats = rt.statistics()[1];
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.bytes_to_device, 3 * bytes);
  EXPECT_EQ(stats.bytes_to_host, 2 * bytes) << "\"a\" went home before its last change";
}

TEST(Devices, TaskLargerThanDeviceMemoryRunsOnCpuOrFailsClearly) {
  versa::Runtime rt{one_device(bytes)};  // room for one handle
  std::vector<double> a = iota(0), b = iota(0);
  auto ha = rt.data(a, "a"), hb = rt.data(b, "b");
  auto add_into = [](Span<const double> x, Span<double> y) {
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += x[i];
  };
  rt.submit("anywhere", add_into, versa::placement(Placement::prefer_gpu), versa::read(ha),
            versa::write(hb));
  rt.wait_all();
  EXPECT_EQ(b[10], 20.0) << "ran on the CPU instead";
  rt.submit("device only", add_into, on(true), versa::read(ha), versa::write(hb));
  const std::string what = failure_of(rt);
  EXPECT_NE(what.find("device only"), std::string::npos) << what;
  EXPECT_NE(what.find("emulated:0"), std::string::npos) << what;
  EXPECT_NE(what.find("larger than the memory"), std::string::npos) << what;
  EXPECT_EQ(b[10], 20.0) << "the host data is intact";
}

TEST(Devices, AcquireBringsDeviceDataHomeAndHostWritesReachTheDevice) {
  versa::Runtime rt{one_device()};
  std::vector<double> data = iota(0);
  auto h = rt.data(data);
  double seen = 0;
  access(rt, h, versa::AccessMode::write, true, &seen);
  {
    auto view = rt.acquire(versa::write(h));
    EXPECT_EQ(view[5], 6.0);
    view[5] = -100;
  }
  access(rt, h, versa::AccessMode::read, true, &seen);
  rt.wait_all();
  const std::vector<double> start = iota(1);
  EXPECT_EQ(seen, std::accumulate(start.begin(), start.end(), 0.0) - 6.0 - 100.0);
}

TEST(Devices, DestroyingAHandleBringsItsDeviceDataHome) {
  versa::Runtime rt{one_device()};
  std::vector<double> data = iota(0);
  {
    auto h = rt.data(data);
    double seen = 0;
    access(rt, h, versa::AccessMode::write, true, &seen);
    // Wait for the task without wait_all (which would bring the data home itself).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (rt.statistics()[1].tasks == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(data, iota(1));
  rt.wait_all();
}

TEST(Devices, PlacementRulesAreFollowed) {
  versa::Runtime rt{one_device()};
  std::vector<std::vector<double>> data(40, iota(0));
  std::vector<versa::Handle<double>> handles;
  for (auto& d : data) handles.push_back(rt.data(d));
  auto bump = [](Span<double> x) { x[0] += 1; };
  auto cpu_type = versa::task_type("cpu type").cpu(bump).placement(Placement::cpu_only);
  auto device_type = versa::task_type("device type").cpu(bump).placement(Placement::gpu_only);
  auto preferring = versa::task_type("preferring").cpu(bump).placement(Placement::prefer_gpu);
  for (auto& h : handles) rt.submit(cpu_type, versa::write(h));
  rt.wait_all();
  EXPECT_EQ(rt.statistics()[0].tasks, 40u);
  EXPECT_EQ(rt.statistics()[1].tasks, 0u);
  for (auto& h : handles) rt.submit(device_type, versa::write(h));
  for (auto& h : handles) rt.submit(preferring, versa::write(h));
  rt.wait_all();
  EXPECT_EQ(rt.statistics()[0].tasks, 40u);
  EXPECT_EQ(rt.statistics()[1].tasks, 80u);
  for (auto& d : data) EXPECT_EQ(d[0], 3.0);
}

// A task type that adds one to its handle's first value, taking `cpu_takes` on a CPU worker and
// `device_takes` on the emulated device (sleeping: a short sleep takes up to 1 ms more on a
// loaded machine).
auto adds_one(const char* name, std::chrono::microseconds cpu_takes,
              std::chrono::microseconds device_takes) {
  return versa::task_type(name)
      .cpu([cpu_takes](Span<double> x) {
        std::this_thread::sleep_for(cpu_takes);
        x[0] += 1;
      })
      .emulated([device_takes](Span<double> x) {
        std::this_thread::sleep_for(device_takes);
        x[0] += 1;
      });
}

TEST(Devices, AutomaticPlacementLearnsWhichDeviceIsFaster) {
  versa::Runtime rt{one_device()};
  // The CPU implementation takes 10 ms, the emulated one 0.1 ms: once calibrated, most tasks
  // belong on the device even though two CPU workers are idle.
  auto work = adds_one("work", std::chrono::milliseconds(10), std::chrono::microseconds(100));
  std::vector<std::vector<double>> data(300, iota(0));
  std::vector<versa::Handle<double>> handles;
  for (auto& d : data) handles.push_back(rt.data(d));
  // Calibration: both kinds are explored.
  for (std::size_t i = 0; i < 20; ++i) rt.submit(work, versa::write(handles[i]));
  rt.wait_all();
  const auto calibration = rt.statistics();
  EXPECT_GE(calibration[0].tasks, 3u) << "the CPU was explored";
  EXPECT_GE(calibration[1].tasks, 3u) << "the device was explored";
  for (auto& h : handles) rt.submit(work, versa::write(h));
  rt.wait_all();
  for (std::size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i][0], i < 20 ? 2.0 : 1.0);
  const auto stats = rt.statistics();
  const auto on_cpu = stats[0].tasks - calibration[0].tasks;
  const auto on_device = stats[1].tasks - calibration[1].tasks;
  EXPECT_EQ(on_cpu + on_device, 300u);
  // Without the model, tasks would be dealt by queue length: about 100 to the device.
  EXPECT_GT(on_device, 180u) << "cpu ran " << on_cpu;
}

// A chain of tasks a core runs thousands of times slower than the device, as a factorisation's
// panel at tiles of 2048 on a GPU machine: once one run on each says so, the CPU workers
// explore the type no more. Each more exploration would be one more long task on the chain's
// path; they ran three of the eight (every other one), at 300 ms each. (600 ms here: the rule
// compares against the device's runs as measured, and a loaded machine stretches the emulated
// device's 0.1 ms sleeps to several.)
TEST(Devices, CpuWorkersFarSlowerThanTheDeviceExploreATaskTypeOnce) {
  versa::Runtime rt{one_device()};
  auto step = adds_one("step", std::chrono::milliseconds(600), std::chrono::microseconds(100));
  std::vector<double> data = iota(0);
  auto h = rt.data(data);
  for (int i = 0; i < 8; ++i) rt.submit(step, versa::write(h));
  rt.wait_all();
  EXPECT_EQ(data[0], 8.0);
  const auto stats = rt.statistics();
  EXPECT_EQ(stats[0].tasks, 1u) << "the CPU workers explored the type again";
  EXPECT_EQ(stats[1].tasks, 7u);
}

// Submits one task of `type` on each of `count` handles of their own at once, waits, and checks
// that each ran once (every task ran, on the CPU workers or the device).
template <class Type>
void burst(versa::Runtime& rt, const Type& type, std::size_t count) {
  std::vector<std::vector<double>> data(count, iota(0));
  std::vector<versa::Handle<double>> handles;
  for (auto& d : data) handles.push_back(rt.data(d));
  for (auto& h : handles) rt.submit(type, versa::write(h));
  rt.wait_all();
  for (const auto& d : data) EXPECT_EQ(d[0], 1.0);
  const auto stats = rt.statistics();
  EXPECT_EQ(stats[0].tasks + stats[1].tasks, count);
}

// A burst of ready tasks of a type no run has measured yet waits in the placement's pool: beyond
// their explorations, the CPU workers take none while their first runs say that each takes a
// hundred times as long there. Dealt by queue length, as before, the two CPU workers took 16
// of the 24.
TEST(Devices, ABurstOfAnUnmeasuredTaskTypeGoesToTheDeviceBeyondTheExplorations) {
  versa::Runtime rt{one_device()};
  burst(rt, adds_one("work", std::chrono::milliseconds(100), std::chrono::microseconds(100)), 24);
  const auto stats = rt.statistics();
  EXPECT_LE(stats[0].tasks, 3u) << "CPU workers took tasks beyond their three explorations";
}

// The same burst of a type the CPU workers run faster than the device (2 ms against 6): once
// their first runs say so, they take their share of it from the pool, most of it.
TEST(Devices, ABurstOfAnUnmeasuredTaskTypeGoesToTheCpuWorkersWhenTheirFirstRunsSayTheyHelp) {
  // A link that takes time, as every real one does: over a free one, the device, its copy slots
  // taken, would take every task as one whose data costs nothing to bring.
  versa::Config config = one_device();
  config.emulated_devices[0].bandwidth_bytes_per_s = 12e9;
  config.emulated_devices[0].latency_s = 10e-6;
  versa::Runtime rt{config};
  burst(rt, adds_one("work", std::chrono::milliseconds(2), std::chrono::milliseconds(6)), 48);
  const auto stats = rt.statistics();
  EXPECT_GT(stats[0].tasks, 24u) << "the device ran " << stats[1].tasks;
}

// A device with four streams whose kernels run side by side.
versa::Config four_lane_device() {
  versa::Config config = one_device();
  config.emulated_devices[0].streams = 4;
  config.emulated_devices[0].concurrent_kernels = 4;
  return config;
}

TEST(Devices, ConcurrentKernelsRunSideBySideAndNoMore) {
  for (const int lanes : {1, 2, 4}) {
    versa::Config config = four_lane_device();
    config.emulated_devices[0].concurrent_kernels = lanes;
    versa::Runtime rt{config};
    std::atomic<int> running{0}, most{0};
    auto kernel = versa::task_type("kernel")
                      .emulated([&](Span<double> x) {
                        const int now = ++running;
                        for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);)
                          ;
                        std::this_thread::sleep_for(std::chrono::milliseconds(5));
                        --running;
                        x[0] += 1;
                      })
                      .placement(Placement::gpu_only);
    std::vector<std::vector<double>> data(24, iota(0));
    std::vector<versa::Handle<double>> handles;
    for (auto& d : data) rt.submit(kernel, versa::write(handles.emplace_back(rt.data(d))));
    rt.wait_all();
    for (const auto& d : data) EXPECT_EQ(d[0], 1.0);
    EXPECT_LE(most, lanes);
    // 24 tasks of 5 ms, eight in flight: kernels that may overlap do.
    EXPECT_EQ(most, lanes) << "lanes " << lanes;
  }
}

// Tasks submitted with a positive priority run on the device's high-priority streams (on an
// emulated device, each stream is a thread of its own), the others on its other streams; the
// results are the program's.
TEST(Devices, TasksWithAPositivePriorityRunOnTheHighPriorityStreams) {
  versa::Config config = one_device();
  config.emulated_devices[0].priority_streams = true;
  versa::Runtime rt{config};
  std::mutex mutex;
  std::set<std::thread::id> high, other;
  std::vector<std::vector<double>> data(32, iota(0));
  std::vector<versa::Handle<double>> handles;
  for (auto& d : data) handles.push_back(rt.data(d));
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t i = 0; i < handles.size(); ++i) {
      const int priority = i % 4 == 0 ? 1 : i % 4 == 1 ? -1 : 0;
      rt.submit(
          "step",
          [&, priority](Span<double> x) {
            {
              const std::lock_guard<std::mutex> lock(mutex);
              (priority > 0 ? high : other).insert(std::this_thread::get_id());
            }
            x[0] += 1;
          },
          on(true), versa::write(handles[i]), versa::priority(priority));
    }
  rt.wait_all();
  for (const auto& d : data) EXPECT_EQ(d[0], 2.0);
  EXPECT_FALSE(high.empty());
  EXPECT_FALSE(other.empty());
  EXPECT_LE(high.size(), 2u) << "the device has two high-priority streams";
  for (const std::thread::id thread : high) EXPECT_EQ(other.count(thread), 0u);
}

// With an engine of their own for the high-priority streams' kernels
// (EmulatedDeviceConfig::panel_kernels, as Config::cuda_panel_sms gives them SMs of their own), a
// task of positive priority runs while a kernel of another stream holds the device's only
// compute slot: that kernel, started first (the panel task waits for a CPU task that waits for
// it to start), waits for the panel task to have run, which on a shared engine it would wait
// for in vain (until `eventually` gives up, after 2 s).
TEST(Devices, APanelEngineRunsHighPriorityKernelsBesideTheOthers) {
  versa::Config config = one_device();
  config.emulated_devices[0].priority_streams = true;
  config.emulated_devices[0].panel_kernels = 1;
  versa::Runtime rt{config};
  std::vector<double> a = iota(0), b = iota(0), c = iota(0);
  auto ha = rt.data(a, "a"), hb = rt.data(b, "b"), hc = rt.data(c, "c");
  std::atomic<bool> update_started{false}, panel_ran{false};
  bool waited_for_nothing = false;
  rt.submit(
      "update",
      [&](Span<double>) {
        update_started = true;
        waited_for_nothing = versa::testing::eventually(panel_ran, std::chrono::seconds(2));
      },
      on(true), versa::write(ha));
  rt.submit(
      "gate", [&](Span<double>) { (void)versa::testing::eventually(update_started); }, on(false),
      versa::write(hc));
  rt.submit(
      "panel",
      [&](Span<const double>, Span<double> x) {
        x[0] = 1;
        panel_ran = true;
      },
      on(true), versa::read(hc), versa::write(hb), versa::priority(1));
  rt.wait_all();
  EXPECT_TRUE(waited_for_nothing) << "the panel's kernel waited for the other engine's";
  EXPECT_EQ(b[0], 1.0);
}

// A task goes to the stream with the fewest tasks on it, not the next in turn: on a device of
// two streams whose kernels run side by side, a task that waits for another to run holds one
// stream; a short task runs on the other; the task that depends on the short one then goes to
// that stream, now idle, instead of queueing behind the waiting task, which it lets go.
TEST(Devices, ATaskGoesToTheIdleStreamNotBehindALongKernel) {
  versa::Config config = one_device();
  config.emulated_devices[0].streams = 2;
  config.emulated_devices[0].concurrent_kernels = 2;
  versa::Runtime rt{config};
  std::vector<double> a = iota(0), b = iota(0);
  auto ha = rt.data(a, "a"), hb = rt.data(b, "b");
  std::atomic<bool> last_ran{false};
  bool waited_for_nothing = false;
  rt.submit(
      "long", [&](Span<double>) { waited_for_nothing = versa::testing::eventually(last_ran); },
      on(true), versa::write(ha));
  rt.submit(
      "short", [](Span<double> x) { x[0] = 1; }, on(true), versa::write(hb));
  rt.submit(
      "after short", [&](Span<const double> x) { last_ran = x[0] == 1; }, on(true),
      versa::read(hb));
  rt.wait_all();
  EXPECT_TRUE(waited_for_nothing) << "the last task queued behind the long one";
}

// With one task launched per stream (Config::device_tasks_per_stream), a task waits until a
// stream is free rather than queueing behind a kernel: on a device of two streams, while a long
// task holds one, three short ones run one after the other on the other, and the long one, which
// waits for them, ends. With two per stream the second short task would queue behind the long
// one, which would wait for it in vain.
TEST(Devices, WithOneTaskPerStreamATaskWaitsForAFreeStream) {
  versa::Config config = one_device();
  config.device_tasks_per_stream = 1;
  config.emulated_devices[0].streams = 2;
  config.emulated_devices[0].concurrent_kernels = 2;
  versa::Runtime rt{config};
  std::vector<std::vector<double>> data(4, iota(0));
  std::vector<versa::Handle<double>> handles;
  for (auto& d : data) handles.push_back(rt.data(d));
  std::atomic<int> short_ones{0};
  bool saw_them_all = false;
  rt.submit(
      "long",
      [&](Span<double>) {
        saw_them_all = versa::testing::eventually([&] { return short_ones == 3; });
      },
      on(true), versa::write(handles[0]));
  for (int i = 1; i <= 3; ++i)
    rt.submit(
        "short",
        [&](Span<double> x) {
          x[0] = 1;
          ++short_ones;
        },
        on(true), versa::write(handles[static_cast<std::size_t>(i)]));
  rt.wait_all();
  EXPECT_TRUE(saw_them_all) << "a short task queued behind the long one";
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(data[static_cast<std::size_t>(i)][0], 1.0);
}

// Tasks of a serial type (Config::device_serial_types) run one after another on a device whose
// four streams' kernels may otherwise run side by side, and the other tasks beside them; without
// the setting the same tasks overlap each other.
TEST(Devices, TasksOfASerialTypeRunOneAfterAnotherAndTheOthersBesideThem) {
  for (const bool serial : {true, false}) {
    SCOPED_TRACE(serial ? "big is serial" : "no serial type");
    versa::Config config = four_lane_device();
    if (serial) config.device_serial_types = {"big"};
    versa::Runtime rt{config};
    std::atomic<int> bigs{0}, all{0}, most_bigs{0}, most_all{0};
    const auto track = [](std::atomic<int>& now, std::atomic<int>& most) {
      const int seen_now = ++now;
      for (int seen = most; seen_now > seen && !most.compare_exchange_weak(seen, seen_now);)
        ;
    };
    auto kernel = [&](bool big) {
      return [&, big](Span<double> x) {
        if (big) track(bigs, most_bigs);
        track(all, most_all);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        --all;
        if (big) --bigs;
        x[0] += 1;
      };
    };
    auto big = versa::task_type("big").emulated(kernel(true)).placement(Placement::gpu_only);
    auto small = versa::task_type("small").emulated(kernel(false)).placement(Placement::gpu_only);
    std::vector<std::vector<double>> data(24, iota(0));
    std::vector<versa::Handle<double>> handles;
    for (auto& d : data) handles.push_back(rt.data(d));
    for (std::size_t i = 0; i < handles.size(); ++i)
      rt.submit(i % 2 == 0 ? big : small, versa::write(handles[i]));
    rt.wait_all();
    for (const auto& d : data) EXPECT_EQ(d[0], 1.0);
    if (serial) {
      EXPECT_EQ(most_bigs, 1) << "two tasks of the serial type overlapped";
      EXPECT_GE(most_all, 2) << "no task ran beside the serial type's";
    } else {
      EXPECT_GE(most_bigs, 2);
    }
  }
}

TEST(Devices, PlacementSharesADevicesQueueAmongItsConcurrentKernels) {
  // The device runs four 5 ms kernels at once: 16 ready tasks take it 20 ms, half the 40 ms one
  // task takes a CPU worker. Counted as one lane, the device would look 80 ms busy and each
  // idle CPU worker would take a task, finishing at 40 ms.
  versa::Runtime rt{four_lane_device()};
  auto work = versa::task_type("work")
                  .cpu([](Span<double> x) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(40));
                    x[0] += 1;
                  })
                  .emulated([](Span<double> x) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                    x[0] += 1;
                  });
  std::vector<std::vector<double>> data(16, iota(0));
  std::vector<versa::Handle<double>> handles;
  for (auto& d : data) handles.push_back(rt.data(d));
  for (int round = 0; round < 2; ++round) {  // calibration: both kinds are explored
    for (auto& h : handles) rt.submit(work, versa::write(h));
    rt.wait_all();
  }
  const auto calibrated = rt.statistics();
  ASSERT_GE(calibrated[0].tasks, 3u) << "the CPU was explored";
  for (auto& h : handles) rt.submit(work, versa::write(h));
  rt.wait_all();
  for (const auto& d : data) EXPECT_EQ(d[0], 3.0);
  const auto stats = rt.statistics();
  EXPECT_EQ(stats[0].tasks - calibrated[0].tasks, 0u) << "a CPU worker took a task";
  EXPECT_EQ(stats[1].tasks - calibrated[1].tasks, 16u);
}

// Placement counts an input that a device fills with zeros as a copy's latency, not a transfer.
// One CPU worker, and a device that runs the tasks in 2 ms where the CPU takes 10 ms but whose
// host link takes 0.4 s for each task's 256 KiB input: the device takes most of the tasks when
// their inputs are declared zero, and almost none when it would have to copy them.
TEST(Devices, PlacementCountsAnInputDeclaredZeroAsNoTransfer) {
  constexpr std::size_t input_doubles = (std::size_t{256} << 10) / sizeof(double);
  constexpr int calibration = 8, measured = 20;
  for (const bool declared : {true, false}) {
    versa::Config config = versa::testing::with_emulated(versa::testing::workers(1), 1, 96 << 20);
    config.emulated_devices[0].bandwidth_bytes_per_s = 640e3;
    versa::Runtime rt{config};
    const auto body = [](std::chrono::milliseconds takes) {
      return [takes](Span<const double> in, Span<double> out) {
        std::this_thread::sleep_for(takes);
        out[0] = in[0] + in[in.size() - 1] + 1.0;
      };
    };
    auto work = versa::task_type("work")
                    .cpu(body(std::chrono::milliseconds(10)))
                    .emulated(body(std::chrono::milliseconds(2)));
    std::vector<std::vector<double>> inputs(calibration + measured,
                                            std::vector<double>(input_doubles, 0.0));
    std::vector<std::vector<double>> outputs(inputs.size(), std::vector<double>(1, 0.0));
    std::vector<versa::Handle<double>> in, out;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      in.push_back(rt.data(inputs[i]));
      out.push_back(rt.data(outputs[i]));
      // The calibration's inputs are zero in both settings, so that exploring is quick.
      if (declared || i < calibration) in.back().declare_zero();
    }
    for (int i = 0; i < calibration; ++i)
      rt.submit(work, versa::read(in[i]), versa::write_only(out[i]));
    rt.wait_all();
    const auto calibrated = rt.statistics();
    ASSERT_GE(calibrated[1].tasks, 3u) << "the device was explored";
    for (int i = calibration; i < calibration + measured; ++i)
      rt.submit(work, versa::read(in[i]), versa::write_only(out[i]));
    rt.wait_all();
    for (const auto& o : outputs) ASSERT_EQ(o[0], 1.0);
    const auto stats = rt.statistics();
    const auto on_device = stats[1].tasks - calibrated[1].tasks;
    EXPECT_EQ(stats[0].tasks + stats[1].tasks, static_cast<std::size_t>(calibration + measured));
    if (declared) {
      EXPECT_GE(on_device, 8u) << "inputs declared zero counted as transfers";
      EXPECT_EQ(stats[1].bytes_to_device, calibrated[1].bytes_to_device);
    } else {
      EXPECT_LE(on_device, 3u) << "the 0.4 s copies were not counted";
    }
  }
}

// The CPU workers leave to the device a task that changes data only the device holds, unless
// they run it surely faster: it would bring the data home and send it back for the device's
// next task. The host links are free here, so only that rule keeps them away. Where the device
// is faster they help with the tasks on data in host memory, as before; where they are three
// times faster they take tasks on the device's data too.
TEST(Devices, CpuWorkersLeaveTasksThatChangeDataOnlyADeviceHoldsUnlessSurelyFaster) {
  for (const bool cpu_faster : {false, true}) {
    SCOPED_TRACE(cpu_faster ? "the CPU is three times faster" : "the device is faster");
    versa::Runtime rt{one_device()};
    // Sleeps of several milliseconds: on a loaded machine a sleep overruns by a millisecond or
    // more, which blurred 1 ms against 3 ms enough that the CPU was not surely faster.
    const auto cpu_takes = std::chrono::milliseconds(cpu_faster ? 4 : 12);
    const auto device_takes = std::chrono::milliseconds(cpu_faster ? 12 : 8);
    // x[0] counts the updates; x[1] says where the last one ran (1: CPU, 2: device).
    auto update = versa::task_type("update")
                      .cpu([cpu_takes](Span<double> x) {
                        std::this_thread::sleep_for(cpu_takes);
                        x[0] += 1;
                        x[1] = 1;
                      })
                      .emulated([device_takes](Span<double> x) {
                        std::this_thread::sleep_for(device_takes);
                        x[0] += 1;
                        x[1] = 2;
                      });
    constexpr std::size_t calibration = 12, held = 8, home = 8;
    std::vector<std::vector<double>> data(calibration + held + home, std::vector<double>(n, 0.0));
    std::vector<versa::Handle<double>> handles;
    for (auto& d : data) handles.push_back(rt.data(d));
    for (std::size_t i = 0; i < calibration; ++i) rt.submit(update, versa::write(handles[i]));
    rt.wait_all();
    const auto calibrated = rt.statistics();
    ASSERT_GE(calibrated[0].tasks, 3u) << "the CPU was explored";
    ASSERT_GE(calibrated[1].tasks, 3u) << "the device was explored";
    // The held handles are written on the device, so the host's copies are stale when their
    // updates are ready.
    for (std::size_t i = calibration; i < calibration + held; ++i)
      rt.submit(
          "place", [](Span<double> x) { x[0] = 10; }, on(true), versa::write(handles[i]));
    for (std::size_t i = calibration; i < data.size(); ++i)
      rt.submit(update, versa::write(handles[i]));
    rt.wait_all();
    std::size_t held_on_cpu = 0, home_on_cpu = 0;
    for (std::size_t i = calibration; i < data.size(); ++i) {
      const bool is_held = i < calibration + held;
      EXPECT_EQ(data[i][0], is_held ? 11.0 : 1.0) << "handle " << i;
      (is_held ? held_on_cpu : home_on_cpu) += data[i][1] == 1.0;
    }
    EXPECT_GT(home_on_cpu, 0u) << "the CPU workers took no task on host data";
    if (cpu_faster) {
      EXPECT_GT(held_on_cpu, 0u) << "the CPU workers, surely faster, left every held task";
    } else {
      EXPECT_EQ(held_on_cpu, 0u) << "the CPU workers took tasks on data only the device held";
    }
  }
}

// A task type 100 ms long on a CPU worker and `device_takes` long on the emulated device, which
// sets its handle's first value to 1.
auto faster_on_the_device(const char* name, std::chrono::microseconds device_takes,
                          std::function<void()> on_device = {}) {
  return versa::task_type(name)
      .cpu([](Span<double> x) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        x[0] = 1;
      })
      .emulated([device_takes, on_device](Span<double> x) {
        std::this_thread::sleep_for(device_takes);
        if (on_device) on_device();
        x[0] = 1;
      });
}

// Runs six tasks of `type` on handles of their own and waits: three explore the CPU workers,
// three the device, and the performance model is calibrated for both.
template <class Type>
void calibrate(versa::Runtime& rt, const Type& type) {
  std::vector<std::vector<double>> data(6, std::vector<double>(n, 0.0));
  std::vector<versa::Handle<double>> handles;
  for (auto& d : data) rt.submit(type, versa::write_only(handles.emplace_back(rt.data(d))));
  rt.wait_all();
}

// Tasks waiting for placement, all faster on the device: the device takes the most urgent first
// (by priority, as the critical path of a tiled factorisation asks), not those it gains most on,
// and the CPU workers leave it the urgent ones. Two long kernels hold the device's launch
// window while both kinds are pooled.
TEST(Devices, ADeviceTakesThePooledTasksOfHighestPriorityFirst) {
  versa::Config config = one_device();
  config.emulated_devices[0].streams = 1;
  config.device_tasks_per_stream = 2;
  versa::Runtime rt{config};
  std::mutex mutex;
  std::vector<char> ran;  // on the device, in order: 'u' urgent, 'b' bulk
  auto urgent = faster_on_the_device("urgent", std::chrono::milliseconds(5), [&] {
    std::lock_guard lock(mutex);
    ran.push_back('u');
  });
  // 200 times faster on the device: by that gain alone, the device would take these first.
  auto bulk = faster_on_the_device("bulk", std::chrono::microseconds(500), [&] {
    std::lock_guard lock(mutex);
    ran.push_back('b');
  });
  calibrate(rt, urgent);
  calibrate(rt, bulk);
  ran.clear();
  const std::uint64_t calibration_on_cpu = rt.statistics()[0].tasks;
  std::vector<std::vector<double>> data(2 + 8 + 4, std::vector<double>(n, 0.0));
  std::vector<versa::Handle<double>> handles;
  for (auto& d : data) handles.push_back(rt.data(d));
  for (std::size_t i = 0; i < 2; ++i)
    rt.submit(
        "hold",
        [](Span<double> x) {
          std::this_thread::sleep_for(std::chrono::milliseconds(150));
          x[0] = 1;
        },
        on(true), versa::write_only(handles[i]));
  for (std::size_t i = 2; i < 10; ++i) rt.submit(bulk, versa::write_only(handles[i]));
  for (std::size_t i = 10; i < 14; ++i)
    rt.submit(urgent, versa::priority(1), versa::write_only(handles[i]));
  rt.wait_all();
  for (const auto& d : data) EXPECT_EQ(d[0], 1.0);
  EXPECT_EQ(std::string(ran.begin(), ran.end()), "uuuubbbbbbbb");
  EXPECT_EQ(rt.statistics()[0].tasks, calibration_on_cpu) << "the CPU workers took pooled tasks";
}

// A device whose slots for tasks waiting for copies are all taken (the link is slow: 50 ms a
// copy) still takes the pooled tasks whose data it holds, and computes while the link is busy:
// whether the tasks on host data were pooled too or held to the device (then more of them wait
// in its queue, none of which may start).
class DeviceCopySlotsTest : public ::testing::TestWithParam<bool> {};

TEST_P(DeviceCopySlotsTest, ADeviceWhoseCopySlotsAreTakenStillTakesPooledTasksOnItsData) {
  const bool host_tasks_held = GetParam();
  versa::Config config = one_device();
  config.emulated_devices[0].streams = 2;  // four tasks waiting for copies at most
  config.emulated_devices[0].latency_s = 0.05;
  versa::Runtime rt{config};
  std::mutex mutex;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::pair<char, double>> ran;  // on the device: ms since start
  auto read_into = [&](char tag) {
    return versa::task_type(tag == 'h' ? "from host" : "from device")
        .cpu([](Span<const double> in, Span<double> out) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          out[0] = in[0] + 1;
        })
        .emulated([&, tag](Span<const double> in, Span<double> out) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          out[0] = in[0] + 1;
          std::lock_guard lock(mutex);
          ran.emplace_back(tag, std::chrono::duration<double, std::milli>(
                                    std::chrono::steady_clock::now() - start)
                                    .count());
        });
  };
  auto from_host = read_into('h'), from_device = read_into('d');
  std::vector<double> calibration_input(n, 0.0);
  auto input = rt.data(calibration_input);
  for (const auto* type : {&from_host, &from_device}) {
    std::vector<std::vector<double>> outputs(6, std::vector<double>(n, 0.0));
    std::vector<versa::Handle<double>> handles;
    for (auto& out : outputs)
      rt.submit(*type, versa::read(input), versa::write_only(handles.emplace_back(rt.data(out))));
    rt.wait_all();
  }
  ran.clear();
  // Both CPU workers busy meanwhile, so that only the device's choices are seen.
  for (int i = 0; i < 2; ++i)
    rt.submit(
        "busy", [] { std::this_thread::sleep_for(std::chrono::milliseconds(250)); }, on(false));
  constexpr std::size_t count = 4;  // as many as wait for copies at once
  const std::size_t host_count = host_tasks_held ? count + 2 : count;
  std::vector<std::vector<double>> on_host(host_count, std::vector<double>(n, 1.0)),
      held(count, std::vector<double>(n, 0.0)),
      outputs(host_count + count, std::vector<double>(n, 0.0));
  std::vector<versa::Handle<double>> host_handles, held_handles, output_handles;
  for (auto& d : on_host) host_handles.push_back(rt.data(d));
  for (auto& d : held) held_handles.push_back(rt.data(d));
  for (auto& d : outputs) output_handles.push_back(rt.data(d));
  // The device's data, written there by one kernel long enough for the tasks on host data to
  // take the slots for copies meanwhile.
  rt.submit(
      "fill",
      [](Span<double> a, Span<double> b, Span<double> c, Span<double> d) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        a[0] = b[0] = c[0] = d[0] = 10;
      },
      on(true), versa::write_only(held_handles[0]), versa::write_only(held_handles[1]),
      versa::write_only(held_handles[2]), versa::write_only(held_handles[3]));
  const auto host_type =
      from_host.placement(host_tasks_held ? Placement::gpu_only : Placement::automatic);
  for (std::size_t i = 0; i < host_count; ++i)
    rt.submit(host_type, versa::read(host_handles[i]), versa::write_only(output_handles[i]));
  for (std::size_t i = 0; i < count; ++i)
    rt.submit(from_device, versa::read(held_handles[i]),
              versa::write_only(output_handles[host_count + i]));
  rt.wait_all();
  for (std::size_t i = 0; i < host_count; ++i) EXPECT_EQ(outputs[i][0], 2.0);
  for (std::size_t i = 0; i < count; ++i) EXPECT_EQ(outputs[host_count + i][0], 11.0);
  // Every task on the device's data ran on it before any task whose input crossed the link.
  double last_held = 0, first_from_host = std::numeric_limits<double>::infinity();
  std::size_t held_on_device = 0;
  for (const auto& [tag, at] : ran) {
    if (tag == 'd') {
      ++held_on_device;
      last_held = std::max(last_held, at);
    } else {
      first_from_host = std::min(first_from_host, at);
    }
  }
  EXPECT_EQ(held_on_device, count);
  EXPECT_LT(last_held, first_from_host)
      << "the tasks on the device's data waited for the link (times in ms)";
}

INSTANTIATE_TEST_SUITE_P(Devices, DeviceCopySlotsTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "HostTasksHeldToTheDevice" : "HostTasksPooled";
                         });

TEST(Devices, FailedAllocationSendsTheTaskToTheCpu) {
  versa::Config config = one_device();
  config.emulated_devices[0].fail_allocations_from = 1;
  versa::Runtime rt{config};
  std::vector<double> data = iota(0);
  auto h = rt.data(data, "x");
  double seen = 0;
  rt.submit(
      "anywhere",
      [&](Span<double> x) {
        x[0] = 42;
        seen = 1;
      },
      versa::placement(Placement::automatic), versa::write(h));
  rt.wait_all();
  EXPECT_EQ(data[0], 42.0);
  EXPECT_EQ(rt.statistics()[1].tasks, 0u);
}

TEST(Devices, FailedAllocationOfADeviceOnlyTaskNamesTaskDeviceAndHandle) {
  versa::Config config = one_device();
  config.emulated_devices[0].fail_allocations_from = 1;
  versa::Runtime rt{config};
  std::vector<double> data = iota(0);
  auto h = rt.data(data, "x");
  bool dependent_ran = false;
  rt.submit(
      "scale", [](Span<double> x) { x[0] *= 2; }, on(true), versa::write(h));
  rt.submit(
      "after", [&](Span<const double>) { dependent_ran = true; }, on(false), versa::read(h));
  std::string task;
  const std::string what = failure_of(rt, &task);
  ASSERT_FALSE(what.empty()) << "expected a TaskFailure";
  EXPECT_EQ(task, "scale");
  EXPECT_NE(what.find("emulated:0"), std::string::npos) << what;
  EXPECT_NE(what.find("handle 'x'"), std::string::npos) << what;
  EXPECT_NE(what.find("failed"), std::string::npos) << what;
  EXPECT_FALSE(dependent_ran) << "a task depending on the failed one was run";
  EXPECT_EQ(data, iota(0)) << "the host data is intact";
}

TEST(Devices, FailedCopyNamesHandleAndDeviceAndKeepsTheHostData) {
  versa::Config config = one_device();
  config.emulated_devices[0].fail_copy_at = 1;
  versa::Runtime rt{config};
  std::vector<double> data = iota(0);
  auto h = rt.data(data, "x");
  rt.submit(
      "scale", [](Span<double> x) { x[0] *= 2; }, on(true), versa::write(h));
  std::string task;
  const std::string what = failure_of(rt, &task);
  ASSERT_FALSE(what.empty()) << "expected a TaskFailure";
  EXPECT_EQ(task, "scale");
  EXPECT_NE(what.find("copy of handle 'x'"), std::string::npos) << what;
  EXPECT_NE(what.find("to emulated:0"), std::string::npos) << what;
  EXPECT_NE(what.find("injected copy failure"), std::string::npos) << what;
  EXPECT_EQ(data, iota(0)) << "the host data is intact";
  // Overwriting the handle makes it usable again; later copies succeed.
  rt.submit(
      "refill",
      [](Span<double> x) {
        for (double& e : x) e = 7;
      },
      on(false), versa::write_only(h));
  rt.submit(
      "scale", [](Span<double> x) { x[0] *= 2; }, on(true), versa::write(h));
  rt.wait_all();
  EXPECT_EQ(data[0], 14.0);
  EXPECT_EQ(data[1], 7.0);
}

// A copy home that fails outside any task (wait_all's write-back, the copy an acquire needs)
// arrives as a CopyFailure, a TaskFailure naming the operation, the handle and the device. The
// host memory keeps the last valid version, the device its copy, and a later try succeeds.
TEST(Devices, AFailedCopyHomeIsACopyFailureAndLosesNothing) {
  for (const bool by_acquire : {false, true}) {
    SCOPED_TRACE(by_acquire ? "acquire" : "wait_all");
    versa::Config config = one_device();
    config.emulated_devices[0].fail_copy_at = 2;  // the copy in succeeds, the copy home fails
    versa::Runtime rt{config};
    std::vector<double> data = iota(0);
    auto h = rt.data(data, "x");
    rt.submit(
        "raise", [](Span<double> x) { x[0] += 100; }, on(true), versa::write(h));
    const char* operation = by_acquire ? "acquire" : "wait_all";
    try {
      if (by_acquire) {
        auto view = rt.acquire(versa::read(h));
      } else {
        rt.wait_all();
      }
      FAIL() << "expected a CopyFailure";
    } catch (const versa::CopyFailure& failure) {
      const std::string what = failure.what();
      EXPECT_EQ(failure.task_name(), operation);
      EXPECT_EQ(failure.handle_name(), "x");
      EXPECT_EQ(failure.device(), "emulated:0");
      EXPECT_EQ(what.rfind(std::string(operation) + ": copy of handle 'x'", 0), 0u) << what;
      EXPECT_NE(what.find("from emulated:0"), std::string::npos) << what;
      EXPECT_NE(what.find("injected copy failure"), std::string::npos) << what;
      EXPECT_THROW(std::rethrow_exception(failure.original()), std::runtime_error);
    }
    EXPECT_EQ(data, iota(0)) << "the host data is the last valid version";
    if (by_acquire) {
      auto view = rt.acquire(versa::read(h));  // the second try brings the result home
      EXPECT_EQ(view[0], 100.0);
      EXPECT_EQ(view[1], 1.0);
    }
    rt.wait_all();
    std::vector<double> expected = iota(0);
    expected[0] = 100.0;
    EXPECT_EQ(data, expected);
    // A later task sees the result too.
    rt.submit(
        "bump", [](Span<double> x) { x[1] += 10; }, on(false), versa::write(h));
    rt.wait_all();
    EXPECT_EQ(data[1], 11.0);
  }
}

// A copy that fails fails the task it was made for, not the tasks that waited for it to land:
// those try again, and the data is still on the device. Two CPU readers of data on the device:
// the first to be staged copies it home, the other waits for that copy.
TEST(Devices, AFailedCopyFailsOnlyTheTaskItWasMadeFor) {
  versa::Config config = one_device();
  config.emulated_devices[0].latency_s = 5e-3;  // the second reader comes while the copy flies
  config.emulated_devices[0].fail_copy_at = 2;  // the copy in succeeds, the first copy home fails
  versa::Runtime rt{config};
  std::vector<double> data = iota(0);
  auto h = rt.data(data, "x");
  rt.submit(
      "raise", [](Span<double> x) { x[0] += 100; }, on(true), versa::write(h));
  std::atomic<int> ran{0};
  std::atomic<double> seen{0};
  for (int reader = 0; reader < 2; ++reader)
    rt.submit(
        "reader",
        [&](Span<const double> x) {
          ++ran;
          seen = x[0];
        },
        on(false), versa::read(h));
  std::string task_name;
  EXPECT_NE(failure_of(rt, &task_name).find("injected copy failure"), std::string::npos);
  EXPECT_EQ(task_name, "reader");
  EXPECT_EQ(ran.load(), 1) << "the reader that waited for the failed copy failed with it";
  EXPECT_EQ(seen.load(), 100.0);
  EXPECT_EQ(data[0], 100.0);
}

// A handle destroyed while its copy home fails: the failure is reported at the next wait_all,
// the user's memory keeps the last version that reached it, and the device gives the handle's
// memory back, so that later tasks use the whole device (evicting each other) and nothing of
// the handle is left in its lists (the AddressSanitizer build checks the eviction and the
// write-backs that walk them). Destroyed inside a task, the handle's data comes home only
// through its retirement's copy.
TEST(Devices, AHandleWhoseCopyHomeFailsAtItsDestructionLeavesTheDeviceWhole) {
  versa::Config config = one_device(4 * bytes);
  config.emulated_devices[0].fail_copy_at = 2;  // the copy in succeeds, the copy home fails
  versa::Runtime rt{config};
  std::vector<double> data = iota(0);
  auto h = std::make_unique<versa::Handle<double>>(rt.data(data, "doomed"));
  std::atomic<bool> raised{false};
  rt.submit(
      "raise",
      [&raised](Span<double> x) {
        x[0] += 100;
        raised = true;
      },
      on(true), versa::write(*h));
  ASSERT_TRUE(versa::testing::eventually(raised));
  rt.submit("destroy", [&h] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the raise finishes
    h.reset();
  });
  try {
    rt.wait_all();
    ADD_FAILURE() << "the failed copy home was not reported";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'doomed'"), std::string::npos) << what;
    EXPECT_NE(what.find("injected copy failure"), std::string::npos) << what;
  }
  EXPECT_EQ(data, iota(0)) << "the host data is the last version that reached it";
  // Four handles fill the device, eight make it evict.
  std::vector<std::vector<double>> others(8, iota(1));
  std::vector<versa::Handle<double>> handles;
  for (auto& other : others) handles.push_back(rt.data(other));
  for (int pass = 0; pass < 2; ++pass)
    for (auto& handle : handles)
      rt.submit(
          "bump", [](Span<double> x) { x[0] += 1; }, on(true), versa::write(handle));
  rt.wait_all();
  for (const auto& other : others) EXPECT_EQ(other[0], 3.0);
}

// Two chains of device tasks run side by side, one per device, and a task reading both follows
// each round: with peer links, the input it lacks comes from the other device directly (no host
// replica is made for it); without, through the host. The results are the same.
TEST(Devices, PeerLinksMoveDataBetweenDevicesWithoutTheHost) {
  struct Moved {
    std::uint64_t host = 0, peers = 0;
  };
  auto run = [](bool peer_links, std::vector<double>& a, std::vector<double>& b,
                std::vector<double>& sums) {
    versa::Config config = versa::testing::with_emulated(versa::testing::workers(2), 2);
    for (versa::EmulatedDeviceConfig& device : config.emulated_devices)
      device.peer_link = peer_links;
    versa::Runtime rt{config};
    auto ha = rt.data(a, "a");
    auto hb = rt.data(b, "b");
    auto hs = rt.data(sums, "sums");
    auto step = [](Span<double> x) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      for (double& e : x) e = 2 * e + 1;
    };
    for (int round = 0; round < 8; ++round) {
      rt.submit("step a", step, on(true), versa::write(ha));
      rt.submit("step b", step, on(true), versa::write(hb));
      rt.submit(
          "sum",
          [round](Span<const double> x, Span<const double> y, Span<double> s) {
            s[static_cast<std::size_t>(round)] = x[0] + y[0];
          },
          on(true), versa::read(ha), versa::read(hb), versa::write(hs));
    }
    rt.wait_all();
    Moved moved;
    for (const versa::DeviceStatistics& d : rt.statistics()) {
      moved.host += d.bytes_to_device + d.bytes_to_host;
      moved.peers += d.bytes_from_peers;
    }
    return moved;
  };
  std::vector<double> expected(8);
  double x = 0, y = 100;
  for (int round = 0; round < 8; ++round) {
    x = 2 * x + 1;
    y = 2 * y + 1;
    expected[static_cast<std::size_t>(round)] = x + y;
  }
  Moved with, without;
  for (const bool peer_links : {true, false}) {
    std::vector<double> a(n, 0.0), b(n, 100.0), sums(8, -1);
    (peer_links ? with : without) = run(peer_links, a, b, sums);
    EXPECT_EQ(sums, expected) << "peer links " << peer_links;
    EXPECT_EQ(a[0], x);
    EXPECT_EQ(b[n - 1], y);
  }
  EXPECT_GT(with.peers, 0u) << "no copy went over a peer link";
  EXPECT_EQ(without.peers, 0u);
  EXPECT_LT(with.host, without.host) << "the peer links saved no host-link traffic";
}

// Two devices with a peer link read one host handle at once over slow host links: the second
// waits for the first one's copy and takes it over the peer link, so the data crosses the host
// link once. When that first copy fails, only its own task fails: the waiting one copies from
// the host itself.
TEST(Devices, DevicesReadingAtOnceShareOneHostCopyOverThePeerLink) {
  for (const bool first_copy_fails : {false, true}) {
    SCOPED_TRACE(first_copy_fails ? "the first copy fails" : "every copy succeeds");
    versa::Config config = versa::testing::with_emulated(versa::testing::workers(1), 2);
    for (versa::EmulatedDeviceConfig& device : config.emulated_devices) {
      device.peer_link = true;
      device.bandwidth_bytes_per_s = 1e5;  // 20 ms per copy: the second reader comes meanwhile
    }
    // emulated:0's copy of "warm-up" is its first; that of "shared" its second.
    if (first_copy_fails) config.emulated_devices[0].fail_copy_at = 2;
    versa::Runtime rt{config};
    auto reader = [](std::vector<double>& results, std::size_t i) {
      return [&results, i](Span<const double> x) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        results[i] = x[n - 1];
      };
    };
    // Calibrates the task type, so that the two readers go where they would finish first: one
    // to each device.
    std::vector<double> warm_up = iota(0), ignored(8);
    auto hw = rt.data(warm_up, "warm-up");
    for (std::size_t i = 0; i < ignored.size(); ++i)
      rt.submit("reader", reader(ignored, i), on(true), versa::read(hw));
    rt.wait_all();
    const auto before = rt.statistics();

    std::vector<double> data = iota(0), results(2, -1.0);
    auto h = rt.data(data, "shared");
    for (std::size_t i = 0; i < 2; ++i)
      rt.submit("reader", reader(results, i), on(true), versa::read(h));
    const std::string what = failure_of(rt);
    const auto after = rt.statistics();
    auto moved = [&](std::uint64_t versa::DeviceStatistics::*field, int node) {
      return after[node].*field - before[node].*field;
    };
    EXPECT_EQ(data, iota(0));
    if (!first_copy_fails) {
      EXPECT_EQ(what, "");
      EXPECT_EQ(results, std::vector<double>(2, n - 1.0));
      ASSERT_EQ(moved(&versa::DeviceStatistics::tasks, 1), 1u);
      ASSERT_EQ(moved(&versa::DeviceStatistics::tasks, 2), 1u);
      EXPECT_EQ(moved(&versa::DeviceStatistics::bytes_to_device, 1) +
                    moved(&versa::DeviceStatistics::bytes_to_device, 2),
                bytes)
          << "the data crossed the host link twice";
      EXPECT_EQ(moved(&versa::DeviceStatistics::bytes_from_peers, 1) +
                    moved(&versa::DeviceStatistics::bytes_from_peers, 2),
                bytes);
      continue;
    }
    // The reader on emulated:1 does not take a failed copy to emulated:0 for its own: whether it
    // waited for that copy or emulated:0 waited for its copy, it ends with its own from the host.
    EXPECT_NE(what.find("to emulated:0"), std::string::npos) << what;
    std::sort(results.begin(), results.end());
    EXPECT_EQ(results, (std::vector<double>{-1.0, n - 1.0}));
    EXPECT_EQ(moved(&versa::DeviceStatistics::tasks, 2), 1u);
    EXPECT_EQ(moved(&versa::DeviceStatistics::bytes_to_device, 2), bytes);
  }
}

TEST(Devices, ExceptionInADeviceTaskIsReportedWithTheDevice) {
  versa::Runtime rt{one_device()};
  std::vector<double> data = iota(0);
  auto h = rt.data(data, "x");
  rt.submit(
      "thrower", [](Span<double>) { throw std::runtime_error("bad block"); }, on(true),
      versa::write(h));
  try {
    rt.wait_all();
    FAIL() << "expected a TaskFailure";
  } catch (const versa::TaskFailure& failure) {
    const std::string what = failure.what();
    EXPECT_NE(what.find("bad block"), std::string::npos) << what;
    EXPECT_NE(what.find("emulated:0"), std::string::npos) << what;
    EXPECT_THROW(std::rethrow_exception(failure.original()), std::runtime_error);
  }
  EXPECT_EQ(data, iota(0));
}

TEST(Devices, TaskTypeWithNoImplementationForAnyPresentDeviceIsRefusedAtSubmit) {
  std::vector<double> data = iota(0);
  {
    versa::Runtime rt{versa::testing::workers(1)};
    auto h = rt.data(data);
    auto device_only =
        versa::task_type("device only").cpu([](Span<double>) {}).placement(Placement::gpu_only);
    try {
      rt.submit(device_only, versa::write(h));
      FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("'device only' has no implementation for any present device"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("present: cpu"), std::string::npos) << what;
      EXPECT_NE(what.find("gpu_only"), std::string::npos) << what;
    }
  }
  {
    versa::Runtime rt{one_device()};
    auto h = rt.data(data);
    auto cuda_only = versa::task_type("cuda only").cuda([](versa::CudaContext&, Span<double>) {});
    try {
      rt.submit(cuda_only, versa::write(h));
      FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("present: cpu, emulated"), std::string::npos) << what;
      EXPECT_NE(what.find("it has: cuda"), std::string::npos) << what;
      // Without the backend the body was dropped, and the message says why there is none.
      if (!VERSA_HAVE_CUDA) {
        EXPECT_NE(what.find("cuda (left out"), std::string::npos) << what;
      }
    }
    rt.wait_all();
  }
  EXPECT_EQ(data, iota(0));
}

TEST(Devices, TwoDevicesExchangeDataThroughTheHost) {
  versa::Runtime rt{versa::testing::with_emulated(versa::testing::workers(1), 2)};
  std::vector<double> data = iota(0);
  auto h = rt.data(data);
  // gpu_only tasks spread over both devices (exploration, then backlog); each adds one.
  for (int i = 0; i < 40; ++i)
    rt.submit(
        "bump",
        [](Span<double> x) {
          for (double& e : x) e += 1;
        },
        on(true), versa::write(h));
  rt.wait_all();
  EXPECT_EQ(data, iota(40));
  const auto stats = rt.statistics();
  EXPECT_EQ(stats[1].tasks + stats[2].tasks, 40u);
}

TEST(Devices, StatisticsArePrintedAtShutdownWhenAskedFor) {
  std::vector<double> data = iota(0);
  testing::internal::CaptureStderr();
  {
    versa::Config config = one_device();
    config.print_statistics = true;
    versa::Runtime rt{config};
    auto h = rt.data(data);
    double seen = 0;
    access(rt, h, versa::AccessMode::write, true, &seen);
    rt.wait_all();
  }
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find("MiB to device"), std::string::npos) << printed;
  EXPECT_NE(printed.find("emulated:0"), std::string::npos) << printed;
  EXPECT_EQ(data, iota(1));
}

TEST(Devices, StartUpSummaryNamesCoresGpusAndEmulatedDevices) {
  versa::Runtime rt{one_device()};
  const std::string& summary = rt.topology_summary();
  EXPECT_NE(summary.find("2 CPU workers"), std::string::npos) << summary;
  EXPECT_NE(summary.find("GPUs: "), std::string::npos) << summary;
  EXPECT_NE(summary.find("emulated:0"), std::string::npos) << summary;
  EXPECT_EQ(rt.device_count(), 1);
  EXPECT_EQ(rt.gpu_count(), 0);
}

}  // namespace
