// A task is a task wherever it runs: a body on an accelerator's thread may spawn children (the
// task finishes only after them), sync() waits for its own children only, and wait_all() or
// acquire() inside it are refused as on a CPU worker. Run on emulated devices both ways bodies
// run there: on a stream's thread, and at launch on the device's worker thread (as the host code
// of a CUDA task), with one stream (every lane of the device waits at once) and with two.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using versa::Placement;
using versa::Span;

struct DeviceSet {
  bool bodies_at_launch;
  int streams;
};

versa::Config config_of(const DeviceSet& set, int devices = 1) {
  versa::Config config = versa::testing::with_emulated(versa::testing::workers(2), devices);
  for (versa::EmulatedDeviceConfig& device : config.emulated_devices) {
    device.bodies_at_launch = set.bodies_at_launch;
    device.streams = set.streams;
  }
  return config;
}

const auto on_device = versa::placement(Placement::gpu_only);
const auto on_cpu = versa::placement(Placement::cpu_only);

class DeviceBodies : public ::testing::TestWithParam<DeviceSet> {};

// The parent returns without sync(): it is finished only after its child, so the next task on
// its handle sees the child's work done (a child of the main program instead would still run).
TEST_P(DeviceBodies, ATaskOnADeviceFinishesAfterItsChildren) {
  versa::Runtime rt{config_of(GetParam())};
  std::vector<int> data(4, 0);
  auto h = rt.data(data, "h");
  constexpr int rounds = 20;
  std::atomic<int> children_done{0};
  std::vector<int> seen(rounds, -1);
  for (int round = 0; round < rounds; ++round) {
    rt.submit(
        "parent",
        [&rt, &children_done](Span<int> v) {
          v[0] += 1;
          rt.spawn("child", [&children_done] {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            children_done.fetch_add(1, std::memory_order_relaxed);
          });
        },
        on_device, versa::write(h));
    rt.submit(
        "after",
        [&children_done, &seen, round](Span<const int>) {
          seen[static_cast<std::size_t>(round)] = children_done.load(std::memory_order_relaxed);
        },
        on_cpu, versa::read(h));
  }
  rt.wait_all();
  for (int round = 0; round < rounds; ++round)
    EXPECT_EQ(seen[static_cast<std::size_t>(round)], round + 1) << "round " << round;
  EXPECT_EQ(data[0], rounds);
}

// sync() inside a device body waits for the body's own children, not for the main program's: a
// child of the main program that runs until the device task is done must not hold it up.
TEST_P(DeviceBodies, SyncWaitsForTheBodysChildrenOnly) {
  versa::Runtime rt{config_of(GetParam())};
  std::atomic<bool> device_task_done{false};
  std::atomic<bool> main_child_timed_out{false};
  rt.spawn("main's child", [&] {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!device_task_done.load(std::memory_order_acquire))
      if (std::chrono::steady_clock::now() > limit) {
        main_child_timed_out = true;
        return;
      } else {
        std::this_thread::yield();
      }
  });
  int x = 0;
  auto h = rt.data(x, "x");
  std::atomic<int> children{0};
  int seen_after_sync = -1;
  rt.submit(
      "syncing",
      [&](Span<int>) {
        for (int i = 0; i < 4; ++i)
          rt.spawn("child", [&children] { children.fetch_add(1, std::memory_order_relaxed); });
        rt.sync();
        seen_after_sync = children.load(std::memory_order_relaxed);
        device_task_done.store(true, std::memory_order_release);
      },
      on_device, versa::write(h));
  rt.wait_all();
  EXPECT_EQ(seen_after_sync, 4);
  EXPECT_FALSE(main_child_timed_out) << "the device body's sync() waited for the main program";
}

// What blocks a worker is refused on a device too, with the same std::logic_error; the refused
// call loses nothing (the task goes on and its result is kept).
TEST_P(DeviceBodies, WaitAllAndAcquireInsideADeviceTaskAreRefused) {
  versa::Runtime rt{config_of(GetParam())};
  double x = 1;
  double other = 5;
  auto h = rt.data(x, "x");
  auto o = rt.data(other, "other");
  std::string wait_all_error, acquire_error;
  rt.submit(
      "misuse",
      [&](Span<double> v) {
        try {
          rt.wait_all();
        } catch (const std::logic_error& e) {
          wait_all_error = e.what();
        }
        try {
          auto view = rt.acquire(versa::write(o));
        } catch (const std::logic_error& e) {
          acquire_error = e.what();
        }
        v[0] = 2;
      },
      on_device, versa::write(h));
  rt.wait_all();
  EXPECT_NE(wait_all_error.find("wait_all() called inside a task"), std::string::npos)
      << wait_all_error;
  EXPECT_NE(acquire_error.find("acquire() called inside a task"), std::string::npos)
      << acquire_error;
  EXPECT_EQ(x, 2.0);
  EXPECT_EQ(other, 5.0);
}

// Recursion on the device: every task of a binary tree runs on the device, spawns its two
// children there and syncs, so that at times every lane of the device waits for children that
// can only run on that device. The sums are those of the sequential recursion.
std::int64_t sequential_sum(int depth, std::int64_t label) {
  if (depth == 0) return label;
  return label + sequential_sum(depth - 1, 2 * label) + sequential_sum(depth - 1, 2 * label + 1);
}

TEST_P(DeviceBodies, RecursionOnTheDeviceWhenEveryLaneWaits) {
  versa::Runtime rt{config_of(GetParam())};
  constexpr int depth = 6;
  std::int64_t result = 0;
  auto h = rt.data(result, "result");
  std::function<std::int64_t(int, std::int64_t)> tree = [&](int level, std::int64_t label) {
    if (level == 0) return label;
    std::int64_t left = 0, right = 0;
    for (int side = 0; side < 2; ++side) {
      std::int64_t& out = side == 0 ? left : right;
      rt.spawn(
          "node", [&tree, &out, level, label, side] { out = tree(level - 1, 2 * label + side); },
          on_device);
    }
    rt.sync();
    return label + left + right;
  };
  rt.submit(
      "root", [&](Span<std::int64_t> r) { r[0] = tree(depth, 1); }, on_device, versa::write(h));
  rt.wait_all();
  EXPECT_EQ(result, sequential_sum(depth, 1));
  const std::vector<versa::DeviceStatistics> stats = rt.statistics();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[1].tasks, (std::uint64_t{1} << (depth + 1)) - 1) << "every node on the device";
}

// A body that throws after spawning: its children still finish before the task, whose failure
// is reported as usual.
TEST_P(DeviceBodies, AThrowingBodyStillWaitsForItsChildren) {
  versa::Runtime rt{config_of(GetParam())};
  int x = 0;
  auto h = rt.data(x, "x");
  std::atomic<bool> child_done{false};
  bool seen = false;
  rt.submit(
      "thrower",
      [&](Span<int>) {
        rt.spawn("slow child", [&child_done] {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          child_done = true;
        });
        throw std::runtime_error("after spawning");
      },
      on_device, versa::write(h));
  rt.submit(
      "after", [&](Span<const int>) { seen = true; }, on_cpu, versa::read(h));
  try {
    rt.wait_all();
    FAIL() << "expected a TaskFailure";
  } catch (const versa::TaskFailure& failure) {
    EXPECT_EQ(failure.task_name(), "thrower");
    EXPECT_TRUE(child_done) << "the task ended before its child";
  }
  EXPECT_FALSE(seen) << "a reader of the failed task's output ran";
}

INSTANTIATE_TEST_SUITE_P(Emulated, DeviceBodies,
                         ::testing::Values(DeviceSet{false, 1}, DeviceSet{false, 2},
                                           DeviceSet{true, 1}, DeviceSet{true, 2}),
                         [](const ::testing::TestParamInfo<DeviceSet>& info) {
                           return std::string(info.param.bodies_at_launch ? "at_launch"
                                                                          : "on_stream") +
                                  "_" + std::to_string(info.param.streams) + "streams";
                         });

}  // namespace
