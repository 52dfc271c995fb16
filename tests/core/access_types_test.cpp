// User-defined access modes (versa::AccessType, include/versa/access_mode.hpp): defined by their
// properties, they order, exclude and run concurrently as those properties say.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using namespace std::chrono_literals;
using versa::testing::workers;

// Multiplications commute with each other but not with commute's additions.
constexpr versa::AccessType multiply{.reorderable = true, .group = 1};
// Tasks that update disjoint parts of the data, and so may run at once.
constexpr versa::AccessType scatter{.reorderable = true, .exclusive = false, .group = 2};
// Overwrites everything without reading, like write_only.
constexpr versa::AccessType fill{.reads = false};
// Reads, but one at a time in program order.
constexpr versa::AccessType ordered_read{.writes = false};

static_assert(versa::modifies(multiply.mode()) && versa::reads_contents(multiply.mode()));
static_assert(versa::needs_exclusive(multiply.mode()) && versa::forms_runs(multiply.mode()));
static_assert(!versa::needs_exclusive(scatter.mode()) && versa::forms_runs(scatter.mode()));
static_assert(versa::overwrites(fill.mode()) && !versa::forms_runs(fill.mode()));
static_assert(!versa::modifies(ordered_read.mode()) && !versa::forms_runs(ordered_read.mode()));
static_assert(multiply.mode() != versa::AccessMode::commute);
static_assert(
    std::is_same_v<decltype(versa::access<ordered_read>(std::declval<versa::Handle<int>>())),
                   versa::Access<versa::Span<const int>>>);

class AccessTypes : public testing::TestWithParam<int> {};

// Two commuting groups on one handle: (x + a + b) * c * d + e, with each group's members in any
// order but the groups in program order; the members of a group exclude each other.
TEST_P(AccessTypes, TwoCommutingGroupsOnOneHandleKeepTheirOrder) {
  versa::Runtime rt{workers(GetParam())};
  for (int round = 0; round < 20; ++round) {
    std::uint64_t x = 1;
    auto h = rt.data(x);
    std::atomic<int> inside{0};
    std::atomic<int> overlaps{0};
    auto exclusive_update = [&](auto update) {
      return [&inside, &overlaps, update](versa::Span<std::uint64_t> v) {
        if (inside.fetch_add(1) != 0) ++overlaps;
        std::this_thread::sleep_for(20us);
        update(v[0]);
        inside.fetch_sub(1);
      };
    };
    std::uint64_t expected = 1;
    for (std::uint64_t a = 1; a <= 4; ++a) {
      rt.submit("add", exclusive_update([a](std::uint64_t& v) { v += a; }), versa::commute(h));
      expected += a;
    }
    for (std::uint64_t c = 3; c <= 9; c += 2) {
      rt.submit("multiply", exclusive_update([c](std::uint64_t& v) { v *= c; }),
                versa::access<multiply>(h));
      expected *= c;
    }
    rt.submit("add", exclusive_update([](std::uint64_t& v) { v += 5; }), versa::commute(h));
    expected += 5;
    rt.wait_all();
    EXPECT_EQ(x, expected) << "round " << round;
    EXPECT_EQ(overlaps.load(), 0);
  }
}

// The members of a non-exclusive run run at once (each waits for all the others to arrive), and
// the run waits for the write before it and holds back the read after it.
TEST_P(AccessTypes, ANonExclusiveRunRunsConcurrently) {
  const int n = GetParam();
  if (n < 2) GTEST_SKIP() << "needs two workers";
  versa::Runtime rt{workers(n)};
  std::vector<int> data(n, 0);
  auto h = rt.data(data);
  rt.submit(
      "init",
      [](versa::Span<int> v) {
        for (int& x : v) x = 10;
      },
      versa::write(h));
  std::atomic<int> arrived{0};
  std::atomic<int> met{0};
  for (int i = 0; i < n; ++i)
    rt.submit(
        "scatter",
        [&, i](versa::Span<int> v) {
          ++arrived;
          const auto deadline = std::chrono::steady_clock::now() + 5s;
          while (arrived.load() < n && std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
          if (arrived.load() == n) ++met;
          v[i] += i;
        },
        versa::access<scatter>(h));
  int sum = 0;
  rt.submit(
      "sum",
      [&](versa::Span<const int> v) {
        for (int x : v) sum += x;
      },
      versa::read(h));
  rt.wait_all();
  EXPECT_EQ(met.load(), n);
  EXPECT_EQ(sum, 10 * n + n * (n - 1) / 2);
}

// Reads of a non-reorderable mode do not form runs: each waits for the one before.
TEST_P(AccessTypes, AnOrderedReadIsOrderedLikeAWrite) {
  versa::Runtime rt{workers(GetParam())};
  int value = 3;
  auto h = rt.data(value);
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> total{0};
  for (int i = 0; i < 8; ++i)
    rt.submit(
        "ordered read",
        [&](versa::Span<const int> v) {
          if (inside.fetch_add(1) != 0) ++overlaps;
          std::this_thread::sleep_for(50us);
          total += v[0];
          inside.fetch_sub(1);
        },
        versa::access<ordered_read>(h));
  rt.wait_all();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(total.load(), 24);
}

// A mode that writes without reading overwrites as write_only does: it is renamed past a busy
// reader, and ends a failure.
TEST_P(AccessTypes, AFillOverwritesLikeWriteOnly) {
  versa::Runtime rt{workers(GetParam())};
  std::vector<int> data(4, 1);
  auto h = rt.data(data);
  rt.submit(
      "fail", [](versa::Span<int>) { throw std::runtime_error("spoilt"); }, versa::write(h));
  rt.submit(
      "fill",
      [](versa::Span<int> v) {
        for (int& x : v) x = 8;
      },
      versa::access<fill>(h));
  int seen = 0;
  rt.submit(
      "read", [&](versa::Span<const int> v) { seen = v[3]; }, versa::read(h));
  EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  EXPECT_EQ(seen, 8);
  EXPECT_EQ(data, std::vector<int>(4, 8));
}

// A mode that overwrites in runs: a sibling's failure spoils what the run leaves, even when the
// sibling that overwrote finished after it (which made data spoilt before the run valid again,
// not data spoilt within it). Renaming off, so that both write the handle itself.
TEST(AccessTypesFailures, AFailureInARunOfOverwritesStandsWhoeverFinishesLast) {
  constexpr versa::AccessType refill{.reads = false, .reorderable = true};
  versa::Config config = workers(2);
  config.rename_memory_limit = 0;
  versa::Runtime rt{config};
  std::vector<int> data(4, 0);
  int delay_data = 0;
  auto h = rt.data(data, "refilled");
  auto delay = rt.data(delay_data, "delay");
  rt.submit(
      "slow", [](versa::Span<int>) { std::this_thread::sleep_for(30ms); }, versa::write(delay));
  rt.submit(
      "fails", [](versa::Span<int>) { throw std::runtime_error("refill failed"); },
      versa::access<refill>(h));
  rt.submit(
      "refills later",
      [](versa::Span<int> v, versa::Span<const int>) {
        for (int& x : v) x = 7;
      },
      versa::access<refill>(h), versa::read(delay));
  bool read_ran = false;
  rt.submit(
      "read", [&read_ran](versa::Span<const int>) { read_ran = true; }, versa::read(h));
  EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  EXPECT_FALSE(read_ran) << "the run's result was used although one of its tasks failed";
}

INSTANTIATE_TEST_SUITE_P(Workers, AccessTypes, testing::Values(1, 2, 4, 8));

// --- with accelerators --------------------------------------------------------------------------

// The tasks of a run of a mode that writes at once (reorderable, not exclusive) must all write
// one copy of the data: on different memory nodes, each would write a copy of its own and one
// copy's writes would be lost. With accelerators they run on the CPU, even those whose type
// could run on a device.
TEST(AccessTypesWithDevices, TasksThatWriteAtOnceAllWriteTheHostCopy) {
  versa::Config config = versa::testing::with_emulated(workers(2), 2);
  for (versa::EmulatedDeviceConfig& device : config.emulated_devices) device.latency_s = 1e-3;
  versa::Runtime rt{config};
  constexpr int n = 16;
  auto add_index = [](int i) {
    return [i](versa::Span<int> v) {
      std::this_thread::sleep_for(200us);
      v[i] += i;
    };
  };
  for (int round = 0; round < 3; ++round) {
    std::vector<int> data(n, 10);
    auto h = rt.data(data, "scattered");
    rt.submit(
        "on a device first", [](versa::Span<int> v) { v[0] += 1; },
        versa::placement(versa::Placement::gpu_only), versa::write(h));
    for (int i = 0; i < n; ++i) {
      auto type = versa::task_type("scatter " + std::to_string(i % 3))
                      .cpu(add_index(i))
                      .emulated(add_index(i));
      rt.submit(type, versa::access<scatter>(h));
    }
    rt.wait_all();
    std::vector<int> expected(n, 10);
    expected[0] += 1;
    for (int i = 0; i < n; ++i) expected[i] += i;
    EXPECT_EQ(data, expected) << "round " << round;
  }
  std::uint64_t device_tasks = 0;
  for (const versa::DeviceStatistics& d : rt.statistics())
    if (d.name != "cpu") device_tasks += d.tasks;
  EXPECT_EQ(device_tasks, 3u) << "only the tasks placed on a device ran there";
}

TEST(AccessTypesWithDevices, ATaskThatWritesAtOnceAndCannotRunOnTheCpuIsRefused) {
  versa::Runtime rt{versa::testing::with_emulated(workers(2), 1)};
  int x = 0;
  auto h = rt.data(x, "scattered");
  try {
    rt.submit(
        "device scatter", [](versa::Span<int> v) { v[0] = 1; },
        versa::placement(versa::Placement::gpu_only), versa::access<scatter>(h));
    ADD_FAILURE() << "a device-only task of a mode that writes at once was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'device scatter'"), std::string::npos) << what;
    EXPECT_NE(what.find("'scattered'"), std::string::npos) << what;
    EXPECT_NE(what.find("CPU"), std::string::npos) << what;
  }
  rt.wait_all();
  EXPECT_EQ(x, 0);
}

}  // namespace
