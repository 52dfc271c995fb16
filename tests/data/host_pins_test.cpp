// The set of pinned host ranges (src/data/host_pins.hpp), with a fake device that records what
// it was asked to page-lock.
#include "data/host_pins.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace versa::detail {
namespace {

struct FakeDevice {
  std::set<const void*> pinned;
  int refusals = 0;
  bool refuse = false;
  HostPins pins() {
    return HostPins(
        [this](void* data, std::size_t) {
          if (refuse) {
            ++refusals;
            return false;
          }
          return pinned.insert(data).second;
        },
        [this](void* data) { EXPECT_EQ(pinned.erase(data), 1u) << "unpinned twice or never"; });
  }
};

TEST(HostPinsTest, PinsRefusesOverlapsAndUnpins) {
  FakeDevice device;
  HostPins pins = device.pins();
  std::vector<char> memory(4096);
  char* base = memory.data();
  EXPECT_TRUE(pins.pin(base + 1024, 1024));
  EXPECT_FALSE(pins.pin(base + 1024, 1024)) << "the same range";
  EXPECT_FALSE(pins.pin(base + 1500, 10)) << "inside a pinned range";
  EXPECT_FALSE(pins.pin(base + 512, 1024)) << "overlapping its start";
  EXPECT_FALSE(pins.pin(base + 2000, 1024)) << "overlapping its end";
  EXPECT_TRUE(pins.pin(base, 1024)) << "just before";
  EXPECT_TRUE(pins.pin(base + 2048, 1024)) << "just after";
  EXPECT_EQ(device.pinned.size(), 3u);
  pins.unpin(base + 1024);
  EXPECT_EQ(device.pinned.count(base + 1024), 0u);
  EXPECT_TRUE(pins.pin(base + 1024, 1024)) << "free again";
  pins.unpin(base + 100);  // never pinned: nothing happens
  EXPECT_EQ(device.pinned.size(), 3u);
}

TEST(HostPinsTest, ARefusalLeavesNothingBehind) {
  FakeDevice device;
  HostPins pins = device.pins();
  std::vector<char> memory(1024);
  device.refuse = true;
  EXPECT_FALSE(pins.pin(memory.data(), memory.size()));
  device.refuse = false;
  EXPECT_TRUE(pins.pin(memory.data(), memory.size())) << "the refused range was not recorded";
  EXPECT_EQ(device.refusals, 1);
}

TEST(HostPinsTest, CloseUnpinsEverythingAndLaterCallsDoNothing) {
  FakeDevice device;
  HostPins pins = device.pins();
  std::vector<char> a(1024), b(1024);
  ASSERT_TRUE(pins.pin(a.data(), a.size()));
  ASSERT_TRUE(pins.pin(b.data(), b.size()));
  pins.close();  // the runtime goes away
  EXPECT_TRUE(device.pinned.empty());
  pins.unpin(a.data());  // a handle destroyed after its runtime: no call to the device
  EXPECT_FALSE(pins.pin(a.data(), a.size()));
  EXPECT_TRUE(device.pinned.empty());
}

}  // namespace
}  // namespace versa::detail
