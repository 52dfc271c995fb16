// Scratch data (Runtime::scratch, scratch_tile): memory the runtime allocates, zeroed, that tasks
// make and use; destroying its handle (or a token's) does not wait for the tasks, and the memory
// is freed once they have run.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "support/eventually.hpp"
#include "support/gate.hpp"
#include "versa/versa.hpp"

namespace {

using namespace std::chrono_literals;

using versa::Placement;
using versa::Span;
using versa::testing::eventually;
using versa::testing::Gate;
using versa::testing::workers;

class ScratchTest : public testing::TestWithParam<int> {
 protected:
  versa::Runtime rt{workers(GetParam())};
};

TEST_P(ScratchTest, StartsAtZeroAndCarriesWhatTasksLeaveToTheTasksAfterThem) {
  constexpr std::size_t n = 1000;
  std::vector<long> out(n, -1);
  auto h_out = rt.data(out, "out");
  auto work = rt.scratch<long>(n, "work");
  rt.submit(
      "fill",
      [](Span<long> w) {
        for (std::size_t i = 0; i < w.size(); ++i) w[i] += static_cast<long>(3 * i);  // 0 + 3i
      },
      versa::write(work));
  rt.submit(
      "copy", [](Span<const long> w, Span<long> o) { std::copy(w.begin(), w.end(), o.begin()); },
      versa::read(work), versa::write(h_out));
  rt.wait_all();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<long>(3 * i)) << i;
  auto view = rt.acquire(versa::read(work));
  EXPECT_EQ(view[n - 1], static_cast<long>(3 * (n - 1)));
  EXPECT_EQ(rt.scratch_memory_bytes(), n * sizeof(long));
}

TEST_P(ScratchTest, ATileIsPackedWithItsRowsAsLeadingDimension) {
  auto tile = rt.scratch_tile<double>(5, 3, "tile");
  std::size_t ld = 0, rows = 0, cols = 0;
  double sum = -1;
  rt.submit(
      "shape",
      [&](versa::Tile<const double> t) {
        ld = t.ld();
        rows = t.rows();
        cols = t.cols();
        sum = 0;
        for (std::size_t j = 0; j < t.cols(); ++j)
          for (std::size_t i = 0; i < t.rows(); ++i) sum += t(i, j);
      },
      versa::read(tile));
  rt.wait_all();
  EXPECT_EQ(rows, 5u);
  EXPECT_EQ(cols, 3u);
  EXPECT_EQ(ld, 5u);
  EXPECT_EQ(sum, 0.0);
}

TEST_P(ScratchTest, ASizeBeyondMemoryIsRefusedWithItsName) {
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 4;
  try {
    (void)rt.scratch<double>(huge, "huge");
    FAIL() << "a scratch of " << huge << " doubles was made";
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("'huge'"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)rt.scratch_tile<double>(huge, 8, "tall"), std::length_error);
  EXPECT_EQ(rt.scratch_memory_bytes(), 0u);
}

TEST_P(ScratchTest, DestroyingItNeitherWaitsForItsTasksNorIsAMisuse) {
  Gate gate;
  long result = 0;
  auto h_result = rt.data(result, "result");
  {
    auto work = rt.scratch<long>(64, "work");
    rt.submit(
        "slow fill",
        [&gate](Span<long> w) {
          gate.pass();
          std::iota(w.begin(), w.end(), 1L);
        },
        versa::write(work));
    rt.submit(
        "sum",
        [](Span<const long> w, Span<long> r) { r[0] = std::accumulate(w.begin(), w.end(), 0L); },
        versa::read(work), versa::write(h_result));
  }  // returns with the fill still blocked
  ASSERT_TRUE(eventually(gate.reached));
  EXPECT_EQ(rt.scratch_memory_bytes(), 64 * sizeof(long)) << "freed under a running task";
  gate.open = true;
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(result, 64L * 65 / 2);
  EXPECT_EQ(rt.scratch_memory_bytes(), 0u);
}

// A handle per step and no wait_all between steps: the steps whose tasks have run are freed, so
// the memory held is that of the steps in flight, not of every step so far.
TEST_P(ScratchTest, ALoopOfStepsHoldsOnlyTheStepsInFlight) {
  constexpr std::size_t n = 1 << 16;  // 512 KiB a step
  constexpr int steps = 20;
  long total = 0;
  auto h_total = rt.data(total, "total");
  std::atomic<int> steps_done{0};
  for (int step = 0; step < steps; ++step) {
    {
      auto work = rt.scratch<long>(n, "work");
      rt.submit(
          "make", [step](Span<long> w) { std::fill(w.begin(), w.end(), step); },
          versa::write_only(work));
      rt.submit(
          "use",
          [&steps_done](Span<const long> w, Span<long> t) {
            t[0] += std::accumulate(w.begin(), w.end(), 0L);
            ++steps_done;
          },
          versa::read(work), versa::write(h_total));
    }
    // Once this step's tasks have run, nothing of it is held.
    ASSERT_TRUE(eventually([&] { return steps_done.load() == step + 1; }));
    ASSERT_TRUE(eventually([&] { return rt.scratch_memory_bytes() == 0; }))
        << "step " << step << ": " << rt.scratch_memory_bytes() << " bytes still held";
  }
  rt.wait_all();
  EXPECT_EQ(total, static_cast<long>(n) * steps * (steps - 1) / 2);
}

// Every step submitted before any runs: each is freed by the worker that ends its last task.
TEST_P(ScratchTest, StepsSubmittedAheadAreFreedOnceTheirTasksHaveRun) {
  constexpr std::size_t n = 1 << 14;
  constexpr int steps = 16;
  long total = 0;
  auto h_total = rt.data(total, "total");
  Gate gate;
  for (int step = 0; step < steps; ++step) {
    auto work = rt.scratch<long>(n, "work");
    rt.submit(
        "make",
        [&gate, step](Span<long> w) {
          if (step == 0) gate.pass();
          std::fill(w.begin(), w.end(), step);
        },
        versa::write(work));
    rt.submit(
        "use", [](Span<const long> w, Span<long> t) { t[0] += w[0] + w[w.size() - 1]; },
        versa::read(work), versa::write(h_total));
  }
  ASSERT_TRUE(eventually(gate.reached));
  EXPECT_EQ(rt.scratch_memory_bytes(), steps * n * sizeof(long));
  gate.open = true;
  EXPECT_TRUE(eventually([&] { return rt.scratch_memory_bytes() == 0; }))
      << rt.scratch_memory_bytes() << " bytes still held";
  rt.wait_all();
  EXPECT_EQ(total, 2L * steps * (steps - 1) / 2);
}

TEST_P(ScratchTest, DestroyedUnderAViewItLivesUntilTheViewIsReleased) {
  long seen = 0;
  auto h_seen = rt.data(seen, "seen");
  {
    auto work = rt.scratch<long>(8, "work");
    auto view = rt.acquire(versa::write(work));
    rt.submit(
        "read", [](Span<const long> w, Span<long> s) { s[0] = w[7]; }, versa::read(work),
        versa::write(h_seen));
    { auto doomed = std::move(work); }  // the handle goes; the view stays usable
    view.view()[7] = 42;
    view.release();
  }
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(seen, 42);
  EXPECT_EQ(rt.scratch_memory_bytes(), 0u);
}

// A task makes scratch data for its children and lets it go before they have run.
TEST_P(ScratchTest, ATaskMayMakeScratchForItsChildren) {
  std::vector<long> out(4, 0);
  auto h_out = rt.data(out, "out");
  rt.submit(
      "parent",
      [this](Span<long> o) {
        {
          auto partial = rt.scratch<long>(o.size(), "partial");
          for (int child = 0; child < 3; ++child)
            rt.spawn(
                "add one",
                [](Span<long> p) {
                  for (long& e : p) e += 1;
                },
                versa::commute(partial));
          rt.spawn(
              "copy out", [o](Span<const long> p) { std::copy(p.begin(), p.end(), o.begin()); },
              versa::read(partial));
        }
        rt.sync();
      },
      versa::write(h_out));
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(out, std::vector<long>(4, 3));
  EXPECT_EQ(rt.scratch_memory_bytes(), 0u);
}

TEST_P(ScratchTest, DestroyingATokenDoesNotWaitForItsTasks) {
  Gate gate;
  std::atomic<bool> first_done{false};
  bool second_saw_first = false;
  {
    versa::Token order = rt.token("order");
    rt.submit(
        "first",
        [&] {
          gate.pass();
          first_done = true;
        },
        versa::write(order));
    rt.submit(
        "second", [&] { second_saw_first = first_done.load(); }, versa::write(order));
  }  // returns with the first task still blocked
  ASSERT_TRUE(eventually(gate.reached));
  gate.open = true;
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_TRUE(second_saw_first) << "the token lost its order when destroyed";
}

INSTANTIATE_TEST_SUITE_P(Workers, ScratchTest, testing::Values(1, 2, 4),
                         [](const auto& info) { return "workers" + std::to_string(info.param); });

// On a device: the scratch data is made there from zeros, never crosses the host link unless
// the host reads it, and is dropped there when its handle goes.
TEST(ScratchOnDevices, IsMadeOnTheDeviceAndNeverComesHomeUnasked) {
  constexpr std::size_t n = 4096;
  versa::Runtime rt{versa::testing::with_emulated(workers(2), 1)};
  std::vector<double> out(n, 0.0);
  auto h_out = rt.data(out, "out");
  h_out.declare_zero();
  const auto on_device = versa::placement(Placement::gpu_only);
  {
    auto work = rt.scratch<double>(n, "work");
    rt.submit(
        "fill",
        [](Span<double> w) {
          for (std::size_t i = 0; i < w.size(); ++i) w[i] += static_cast<double>(i);
        },
        on_device, versa::write(work));
    rt.submit(
        "double",
        [](Span<const double> w, Span<double> o) {
          for (std::size_t i = 0; i < o.size(); ++i) o[i] = 2 * w[i];
        },
        on_device, versa::read(work), versa::write(h_out));
  }
  rt.wait_all();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0 * static_cast<double>(i)) << i;
  const versa::DeviceStatistics device = rt.statistics().at(1);
  EXPECT_EQ(device.tasks, 2u);
  EXPECT_EQ(device.bytes_zeroed, 2 * n * sizeof(double));  // work and out
  EXPECT_EQ(device.bytes_to_device, 0u);
  EXPECT_EQ(device.bytes_to_host, n * sizeof(double)) << "only out comes home";
  EXPECT_EQ(rt.scratch_memory_bytes(), 0u);
}

// Steps submitted ahead, one after the other, each with a scratch tile on a device that holds
// four: `renamed` has each step's tile renamed by its write_only. A tile whose tasks have run is
// freed by the thread that ran the last of them, without a wait_all; a renamed one only by
// wait_all. Returns the device's statistics.
versa::DeviceStatistics run_steps_with_dead_scratch(bool renamed) {
  constexpr std::size_t n = 1 << 14;  // 128 KiB a tile
  constexpr int steps = 12;
  versa::Runtime rt{
      versa::testing::with_emulated(workers(2), 1, 4 * n * sizeof(double) + (64 << 10))};
  std::vector<double> sums(steps, 0.0);
  auto h_sums = rt.data(sums, "sums");
  h_sums.declare_zero();
  const auto on_device = versa::placement(Placement::gpu_only);
  Gate gate;
  for (int step = 0; step < steps; ++step) {
    auto work = rt.scratch<double>(n, "work");
    // After the step before (its sum): one step's tile is in use at a time.
    rt.submit(
        "touch",
        [&gate, step](Span<const double>, Span<double> w) {
          if (step == 0) gate.pass();
          w[0] = -1;
        },
        on_device, versa::read(h_sums), versa::write(work));
    if (renamed)  // registered while the touch is pending: a new instance
      rt.submit(
          "make", [step](Span<double> w) { std::fill(w.begin(), w.end(), step); }, on_device,
          versa::write_only(work));
    else
      rt.submit(
          "make", [step](Span<double> w) { std::fill(w.begin(), w.end(), step); }, on_device,
          versa::write(work));
    rt.submit(
        "sum",
        [step](Span<const double> w, Span<double> s) {
          s[static_cast<std::size_t>(step)] = std::accumulate(w.begin(), w.end(), 0.0);
        },
        on_device, versa::read(work), versa::write(h_sums));
  }  // every step submitted, and every handle destroyed, before the first runs
  gate.open = true;
  if (!renamed) {
    EXPECT_TRUE(eventually([&] { return rt.scratch_memory_bytes() == 0; }))
        << rt.scratch_memory_bytes() << " bytes of scratch still held once every task has run";
  }
  rt.wait_all();
  for (int step = 0; step < steps; ++step)
    EXPECT_EQ(sums[static_cast<std::size_t>(step)], static_cast<double>(n) * step) << step;
  EXPECT_EQ(rt.scratch_memory_bytes(), 0u);
  EXPECT_EQ(rt.renamed_accesses(), renamed ? static_cast<std::uint64_t>(steps) : 0u);
  return rt.statistics().at(1);
}

TEST(ScratchOnDevices, IsFreedOnceItsTasksHaveRunAndNeverComesHome) {
  const versa::DeviceStatistics device = run_steps_with_dead_scratch(false);
  EXPECT_EQ(device.bytes_to_host, 12 * sizeof(double)) << "only the sums come home";
}

TEST(ScratchOnDevices, ARenamedTileIsRetiredByWaitAll) {
  const versa::DeviceStatistics device = run_steps_with_dead_scratch(true);
  EXPECT_GT(device.evictions, 0u) << "the device never ran short: the test tests nothing";
  // Each step's make ran ahead of its sum, on a tile of its own (the renamed instance), and a
  // device holding four tiles writes such a tile home to make room: at most once, with the sums
  // (12 doubles) each time they are evicted. A root that its write_only superseded is dropped:
  // written home too (when nothing told it apart), the tiles that came home were 1.7-2.4 MB.
  const std::size_t tile = (1 << 14) * sizeof(double);
  EXPECT_LE(device.bytes_to_host, 12 * (tile + 12 * sizeof(double)));
}

// A renamed scratch handle's data lies in its newest instance, which dies with the handle: it
// is dropped, not brought home into memory about to be freed.
TEST(ScratchOnDevices, ARenamedHandleIsDroppedNotBroughtHome) {
  constexpr std::size_t n = 4096;
  versa::Runtime rt{versa::testing::with_emulated(workers(2), 1)};
  double sum = 0;
  auto h_sum = rt.data(&sum, 1, "sum");
  const auto on_device = versa::placement(Placement::gpu_only);
  Gate gate;
  {
    auto work = rt.scratch<double>(n, "work");
    rt.submit(
        "touch", [&gate](Span<double> w) { gate.pass(), w[0] = -1; }, on_device,
        versa::write(work));
    rt.submit(  // registered while the touch is pending: a new instance
        "make", [](Span<double> w) { std::fill(w.begin(), w.end(), 1.0); }, on_device,
        versa::write_only(work));
    rt.submit(
        "sum",
        [](Span<const double> w, Span<double> s) {
          s[0] = std::accumulate(w.begin(), w.end(), 0.0);
        },
        on_device, versa::read(work), versa::write(h_sum));
  }
  gate.open = true;
  rt.wait_all();
  EXPECT_EQ(sum, static_cast<double>(n));
  EXPECT_EQ(rt.renamed_accesses(), 1u);
  EXPECT_EQ(rt.statistics().at(1).bytes_to_host, sizeof(double)) << "only the sum comes home";
  EXPECT_EQ(rt.scratch_memory_bytes(), 0u);
}

TEST(ScratchOnDevices, TheHostSeesWhatADeviceMadeWhenItAsks) {
  constexpr std::size_t n = 512;
  versa::Runtime rt{versa::testing::with_emulated(workers(2), 1)};
  auto work = rt.scratch<double>(n, "work");
  rt.submit(
      "fill", [](Span<double> w) { std::iota(w.begin(), w.end(), 1.0); },
      versa::placement(Placement::gpu_only), versa::write(work));
  double sum_on_cpu = 0;
  rt.submit(
      "sum", [&](Span<const double> w) { sum_on_cpu = std::accumulate(w.begin(), w.end(), 0.0); },
      versa::placement(Placement::cpu_only), versa::read(work));
  rt.wait_all();
  EXPECT_EQ(sum_on_cpu, n * (n + 1) / 2.0);
  auto view = rt.acquire(versa::read(work));
  EXPECT_EQ(view[n - 1], static_cast<double>(n));
}

// Random steps, each with a scratch buffer made from one handle and used by others, destroyed
// at once, on the CPUs and devices short of memory (with and without a peer link between them):
// every handle ends as in the sequential run of the same steps. Values are integers modulo 2^64,
// so any order mistake shows, and rounding cannot hide one.
struct StressCase {
  int devices;
  bool peer_link;
  unsigned seed;
};

class ScratchStress : public testing::TestWithParam<StressCase> {};

TEST_P(ScratchStress, StepsWithScratchEndAsTheSequentialRun) {
  using Value = std::uint64_t;
  constexpr std::size_t n = 1024;  // 8 KiB a handle
  constexpr int handles = 6, steps = 300;
  const StressCase c = GetParam();
  // Each device holds about four handles: scratch of earlier steps must make room.
  versa::Config config =
      versa::testing::with_emulated(workers(2), c.devices, 4 * n * sizeof(Value));
  for (versa::EmulatedDeviceConfig& device : config.emulated_devices)
    device.peer_link = c.peer_link;
  versa::Runtime rt{config};

  std::mt19937 random(c.seed);
  std::vector<std::vector<Value>> data(handles), expected(handles);
  std::vector<versa::Handle<Value>> h;
  for (int i = 0; i < handles; ++i) {
    data[i].resize(n);
    for (std::size_t k = 0; k < n; ++k) data[i][k] = random() * 2 + 1;
    expected[i] = data[i];
    h.push_back(rt.data(data[i], "x" + std::to_string(i)));
    h.back().set_reduction(versa::sum<Value>());
  }
  const Placement rules[] = {Placement::cpu_only, Placement::gpu_only, Placement::automatic};
  auto rule = [&] { return versa::placement(rules[random() % 3]); };
  for (int step = 0; step < steps; ++step) {
    const int from = static_cast<int>(random() % handles);
    const int to = static_cast<int>(random() % handles);
    const int summed = static_cast<int>(random() % handles);
    const bool overwrite = random() % 2 == 0;
    const Value salt = static_cast<Value>(step) * 7919;
    {
      auto s = rt.scratch<Value>(n, "s");
      // s = 3 x_from + salt + k: written whole, or added to the zeros it starts with.
      auto make = [salt](Span<const Value> x, Span<Value> out) {
        for (std::size_t k = 0; k < out.size(); ++k) out[k] += 3 * x[k] + salt + k;
      };
      auto make_whole = [salt](Span<const Value> x, Span<Value> out) {
        for (std::size_t k = 0; k < out.size(); ++k) out[k] = 3 * x[k] + salt + k;
      };
      if (overwrite)
        rt.submit("make whole", make_whole, rule(), versa::read(h[from]), versa::write_only(s));
      else
        rt.submit("make", make, rule(), versa::read(h[from]), versa::write(s));
      if (to != from)
        rt.submit(
            "use",
            [](Span<const Value> x, Span<Value> out) {
              for (std::size_t k = 0; k < out.size(); ++k) out[k] = out[k] * 5 + x[k];
            },
            rule(), versa::read(s), versa::write(h[to]));
      if (summed != from && summed != to)
        rt.submit(
            "sum",
            [](Span<const Value> x, Span<Value> out) {
              for (std::size_t k = 0; k < out.size(); ++k) out[k] += x[k];
            },
            rule(), versa::read(s), versa::add(h[summed]));
    }  // s goes: its tasks run on
    std::vector<Value> made(n);
    for (std::size_t k = 0; k < n; ++k) made[k] = 3 * expected[from][k] + salt + k;
    if (to != from)
      for (std::size_t k = 0; k < n; ++k) expected[to][k] = expected[to][k] * 5 + made[k];
    if (summed != from && summed != to)
      for (std::size_t k = 0; k < n; ++k) expected[summed][k] += made[k];
  }
  rt.wait_all();
  for (int i = 0; i < handles; ++i)
    for (std::size_t k = 0; k < n; ++k)
      ASSERT_EQ(data[i][k], expected[i][k]) << "handle " << i << ", element " << k;
  EXPECT_EQ(rt.scratch_memory_bytes(), 0u);
  std::uint64_t device_tasks = 0;
  for (const versa::DeviceStatistics& d : rt.statistics())
    device_tasks += d.name == "cpu" ? 0 : d.tasks;
  EXPECT_GT(device_tasks, 0u);
}

INSTANTIATE_TEST_SUITE_P(Devices, ScratchStress,
                         testing::Values(StressCase{1, false, 1}, StressCase{1, false, 2},
                                         StressCase{2, false, 3}, StressCase{2, true, 4},
                                         StressCase{2, true, 5}, StressCase{3, true, 6}),
                         [](const auto& info) {
                           return std::to_string(info.param.devices) + "devices" +
                                  (info.param.peer_link ? "_peer" : "") + "_seed" +
                                  std::to_string(info.param.seed);
                         });

}  // namespace
