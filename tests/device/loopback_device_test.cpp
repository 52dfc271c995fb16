// A device kind that exists only in the tests, registered the way any new kind would be: a
// Device implementation and one register_device_kind call, with no change to the runtime. Its
// devices keep their memory on the host and run tasks through the emulated implementation
// (they are emulated devices under another kind and name). The fuzzers run their programs on
// it (fuzz_test.cpp), which shows that core, placement and reductions hold nothing specific
// to the kinds they were written with. It asks for pinned host memory, as a GPU does, and
// records what it is given to pin.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "device/device_registry.hpp"
#include "emulated/emulated_device.hpp"
#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using versa::detail::BlockCopy;
using versa::detail::Completion;
using versa::detail::Device;
using versa::detail::DeviceKind;
using versa::detail::ReductionOps;
using versa::detail::Task;

DeviceKind loopback_kind();

// The host ranges the loopback devices hold pinned, by first address (all devices together,
// as CUDA pins for every GPU at once).
class PinnedRanges {
 public:
  void add(const void* p) {
    const std::lock_guard<std::mutex> lock(mutex_);
    pinned_.insert(p);
  }
  void remove(const void* p) {
    const std::lock_guard<std::mutex> lock(mutex_);
    pinned_.erase(p);
  }
  bool contains(const void* p) {
    const std::lock_guard<std::mutex> lock(mutex_);
    return pinned_.count(p) != 0;
  }

 private:
  std::mutex mutex_;
  std::set<const void*> pinned_;
};
PinnedRanges pinned_ranges;

class LoopbackDevice final : public Device {
 public:
  LoopbackDevice(int index, std::size_t memory_limit)
      : inner_(index, instant_link(), memory_limit), name_("loopback:" + std::to_string(index)) {}

  DeviceKind kind() const override { return loopback_kind(); }
  const std::string& name() const override { return name_; }
  std::size_t memory_capacity() const override { return inner_.memory_capacity(); }
  int streams() const override { return inner_.streams(); }
  int priority_streams() const override { return inner_.priority_streams(); }
  int concurrent_kernels() const override { return inner_.concurrent_kernels(); }
  double bandwidth() const override { return 1e12; }
  double latency() const override { return 0; }
  void* allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void deallocate(void* pointer) override { inner_.deallocate(pointer); }
  void copy_to_device(const BlockCopy& copy, Completion done) override {
    inner_.copy_to_device(copy, std::move(done));
  }
  void copy_to_host(const BlockCopy& copy, Completion done) override {
    inner_.copy_to_host(copy, std::move(done));
  }
  void execute(int stream, Task& task, Completion done) override {
    inner_.execute(stream, task, std::move(done));
  }
  bool runs_bodies_at_launch() const override { return inner_.runs_bodies_at_launch(); }
  bool pins_host_memory() const override { return true; }
  bool register_host_memory(void* pointer, std::size_t) override {
    pinned_ranges.add(pointer);
    return true;
  }
  void unregister_host_memory(void* pointer) override { pinned_ranges.remove(pointer); }
  void set_body_host(versa::detail::BodyHost* host) override { inner_.set_body_host(host); }
  std::string merge_partials(const ReductionOps& ops, void* into, const void* from,
                             std::size_t count) override {
    return inner_.merge_partials(ops, into, from, count);
  }

 private:
  static versa::EmulatedDeviceConfig instant_link() {
    versa::EmulatedDeviceConfig config;
    config.bandwidth_bytes_per_s = 0;
    config.latency_s = 0;
    config.priority_streams = true;  // as a GPU's
    return config;
  }
  versa::detail::EmulatedDevice inner_;
  const std::string name_;
};

// Config::other_devices["loopback"] devices, each capped by Config::device_memory_limit.
versa::detail::DeviceBackend loopback_backend() {
  return {"loopback", versa::detail::ImplementationSlot::emulated,
          [](const versa::Config& config, std::vector<std::unique_ptr<Device>>& devices) {
            const auto wanted = config.other_devices.find("loopback");
            const int count = wanted == config.other_devices.end() ? 0 : wanted->second;
            if (count < 0) throw std::invalid_argument("loopback devices: negative count");
            for (int i = 0; i < count; ++i)
              devices.push_back(std::make_unique<LoopbackDevice>(i, config.device_memory_limit));
            return "loopback devices: " + std::to_string(count);
          }};
}

DeviceKind loopback_kind() {
  static const DeviceKind kind = versa::detail::register_device_kind(loopback_backend());
  return kind;
}

// Registered before main, as a kind outside the library would be.
const DeviceKind registered = loopback_kind();

TEST(RegisteredDeviceKind, RunsTasksAndReductionsAndNamesItself) {
  versa::Config config = versa::testing::workers(1);
  config.other_devices["loopback"] = 1;
  versa::Runtime rt{config};
  EXPECT_NE(rt.topology_summary().find("loopback devices: 1"), std::string::npos)
      << rt.topology_summary();
  ASSERT_EQ(rt.device_count(), 1);
  std::vector<long> x(64, 1);
  long sum = 0;
  auto hx = rt.data(x, "x");
  auto hs = rt.data(sum, "sum");
  hs.set_reduction(versa::sum<long>());
  for (int i = 0; i < 16; ++i)
    rt.submit(
        "scale and add",
        [](versa::Span<long> v, versa::Span<long> s) {
          for (long& e : v) e *= 2;
          s[0] += v[0];
        },
        versa::write(hx), versa::add(hs), versa::placement(versa::Placement::gpu_only));
  rt.wait_all();
  EXPECT_EQ(x[0], 1L << 16);
  EXPECT_EQ(sum, (1L << 17) - 2);
  const auto statistics = rt.statistics();
  ASSERT_EQ(statistics.size(), 2u);
  EXPECT_EQ(statistics[1].name, "loopback:0");
  EXPECT_EQ(statistics[1].tasks, 16u);
  EXPECT_EQ(versa::detail::device_kind_name(registered), "loopback");
}

// A large handle's memory is pinned before its first copy to or from a device, not when it is
// registered, and unpinned with the handle; data made on the device (declared zero, without
// write-back) and data below 256 KiB are never pinned. The loopback kind keeps the default
// zero fill, a copy of zeros from a buffer of the runtime's.
TEST(RegisteredDeviceKind, HostMemoryIsPinnedBeforeItsFirstCopy) {
  versa::Config config = versa::testing::workers(1);
  config.other_devices["loopback"] = 1;
  versa::Runtime rt{config};
  auto on_device = versa::placement(versa::Placement::gpu_only);
  auto bump = [](versa::Span<double> v) {
    for (double& e : v) e += 1;
  };
  std::vector<double> big(1 << 16, 1.0), zeros(1 << 16, 0.0), small(1 << 10, 1.0);
  {
    auto h = rt.data(big, "big");
    EXPECT_FALSE(pinned_ranges.contains(big.data())) << "pinned when registered";
    rt.submit("bump", bump, on_device, versa::write(h));
    rt.wait_all();
    EXPECT_TRUE(pinned_ranges.contains(big.data()));
  }
  EXPECT_FALSE(pinned_ranges.contains(big.data())) << "still pinned after the handle went";
  EXPECT_EQ(big[0], 2.0);
  {
    auto hz = rt.data(zeros, "zeros"), hs = rt.data(small, "small");
    hz.declare_zero();
    hz.set_write_back(false);
    rt.submit("bump", bump, on_device, versa::write(hz));
    rt.submit("bump", bump, on_device, versa::write(hs));
    rt.wait_all();
    EXPECT_FALSE(pinned_ranges.contains(zeros.data()));
    EXPECT_FALSE(pinned_ranges.contains(small.data()));
    EXPECT_EQ(small[0], 2.0);
  }
  EXPECT_EQ(zeros[0], 0.0) << "not written back";
  EXPECT_EQ(rt.statistics()[1].bytes_zeroed, zeros.size() * sizeof(double));
}

// Config::auto_pin_bytes sets the smallest handle pinned automatically; 0 pins none.
TEST(RegisteredDeviceKind, AutomaticPinningTakesHandlesOfTheConfiguredSize) {
  auto on_device = versa::placement(versa::Placement::gpu_only);
  auto bump = [](versa::Span<double> v) {
    for (double& e : v) e += 1;
  };
  std::vector<double> half(1 << 16, 1.0), whole(1 << 17, 1.0);  // 512 KiB and 1 MiB
  for (const std::size_t threshold : {std::size_t{0}, std::size_t{1} << 20}) {
    versa::Config config = versa::testing::workers(1);
    config.other_devices["loopback"] = 1;
    config.auto_pin_bytes = threshold;
    versa::Runtime rt{config};
    auto h = rt.data(half, "half"), w = rt.data(whole, "whole");
    rt.submit("bump", bump, on_device, versa::write(h));
    rt.submit("bump", bump, on_device, versa::write(w));
    rt.wait_all();
    EXPECT_FALSE(pinned_ranges.contains(half.data())) << threshold;
    EXPECT_EQ(pinned_ranges.contains(whole.data()), threshold != 0) << threshold;
  }
  EXPECT_EQ(half[0], 3.0);
  EXPECT_EQ(whole[0], 3.0);
}

TEST(RegisteredDeviceKind, UnknownKindIsRefused) {
  versa::Config config = versa::testing::workers(1);
  config.other_devices["nonesuch"] = 1;
  try {
    versa::Runtime rt{config};
    FAIL() << "a kind nobody registered was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("nonesuch"), std::string::npos) << e.what();
  }
}

}  // namespace
