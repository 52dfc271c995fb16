// The emulated device's compute engine: a slot freed goes to a high-priority caller first, and
// to the others once none of high priority waits; as many run at once as there are slots.
#include "emulated/compute_engine.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/eventually.hpp"

namespace {

using versa::detail::ComputeEngine;
using versa::detail::ComputeSlot;
using versa::testing::eventually;

// The order in which callers got a slot.
class Order {
 public:
  void add(const std::string& who) {
    const std::lock_guard<std::mutex> lock(mutex_);
    order_.push_back(who);
  }
  std::vector<std::string> get() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return order_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> order_;
};

// Callers arrive one after the other while the engine's one slot is taken; each takes the slot
// for a moment when its turn comes. Returns the order of their turns.
std::vector<std::string> turns(const std::vector<std::pair<std::string, bool>>& callers) {
  ComputeEngine engine(1);
  Order order;
  std::vector<std::thread> threads;
  {
    const ComputeSlot held(engine);
    for (const auto& [name, high_priority] : callers) {
      threads.emplace_back([&engine, &order, name = name, high_priority = high_priority] {
        const ComputeSlot slot(engine, high_priority);
        order.add(name);
      });
      const int before = static_cast<int>(threads.size());
      EXPECT_TRUE(eventually([&] { return engine.waiting() == before; }));
    }
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(engine.waiting(), 0);
  return order.get();
}

// Among callers of one priority the order is not promised (a condition wakes them all).
TEST(ComputeEngine, HighPriorityCallersTakeTheSlotBeforeThoseWaitingLonger) {
  std::vector<std::string> order =
      turns({{"low", false}, {"high", true}, {"low", false}, {"high", true}, {"low", false}});
  EXPECT_EQ(order, (std::vector<std::string>{"high", "high", "low", "low", "low"}));
  // Without high-priority callers, every low one gets its turn.
  order = turns({{"low", false}, {"low", false}});
  EXPECT_EQ(order, (std::vector<std::string>{"low", "low"}));
}

// With two slots, two callers run at once: a high-priority caller that takes one of two freed
// slots leaves the other to the low-priority caller waiting, which holds its slot at the same
// time (each waits for the other before giving its slot back).
TEST(ComputeEngine, TwoSlotsRunTwoCallersAtOnce) {
  for (int round = 0; round < 20; ++round) {
    ComputeEngine engine(2);
    std::atomic<bool> high_runs{false}, low_runs{false};
    std::atomic<int> met{0};
    std::thread low, high;
    {
      const ComputeSlot first(engine), second(engine);
      low = std::thread([&] {
        const ComputeSlot slot(engine);
        low_runs = true;
        if (eventually(high_runs)) ++met;
      });
      EXPECT_TRUE(eventually([&] { return engine.waiting() == 1; }));
      high = std::thread([&] {
        const ComputeSlot slot(engine, true);
        high_runs = true;
        if (eventually(low_runs)) ++met;
      });
      EXPECT_TRUE(eventually([&] { return engine.waiting() == 2; }));
    }
    low.join();
    high.join();
    EXPECT_EQ(met.load(), 2) << "round " << round;
  }
}

}  // namespace
