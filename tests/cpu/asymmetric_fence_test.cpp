// The asymmetric fence of the sleep protocol: light() on one thread and heavy() on another must
// forbid the store-buffering outcome (each thread storing its flag, then reading the other's as
// still unset), which x86 shows readily when either side lacks its fence.
#include "cpu/asymmetric_fence.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "base/thread_annotations.hpp"  // VERSA_TSAN

namespace {

using versa::detail::AsymmetricFence;

// A two-thread barrier: spins (so that both threads leave it at about the same time, which is
// when reordering shows), yielding only after a while in case the two share a core.
void meet(std::atomic<int>& arrived, int target) {
  arrived.fetch_add(1, std::memory_order_acq_rel);
  for (int spins = 0; arrived.load(std::memory_order_acquire) < target; ++spins)
    if (spins > 100'000) std::this_thread::yield();
}

// A few dozen iterations, varied from round to round: the thread that leaves the barrier first
// would otherwise always be ahead by the same cache-line transfer, and the two stores would
// seldom be in flight together.
void delay(int seed) {
  for (int i = seed % 61; i > 0; --i) std::atomic_signal_fence(std::memory_order_seq_cst);
}

TEST(AsymmetricFence, LightAndHeavyForbidBothThreadsMissingTheOthersStore) {
  if (VERSA_TSAN) GTEST_SKIP() << "ThreadSanitizer refuses fences; the pool does not use them";
  const AsymmetricFence fence;
  constexpr int rounds = 20'000;
  std::atomic<int> x{0}, y{0}, arrived{0};
  int seen_by_light = 0, seen_by_heavy = 0, both_missed = 0;
  std::thread heavy_side([&] {
    for (int r = 0; r < rounds; ++r) {
      meet(arrived, 4 * r + 2);  // the flags are reset
      delay(r * 7);
      y.store(1, std::memory_order_relaxed);
      fence.heavy();
      seen_by_heavy = x.load(std::memory_order_relaxed);
      meet(arrived, 4 * r + 4);  // both have looked
    }
  });
  for (int r = 0; r < rounds; ++r) {
    x.store(0, std::memory_order_relaxed);
    y.store(0, std::memory_order_relaxed);
    meet(arrived, 4 * r + 2);
    delay(r * 13);
    x.store(1, std::memory_order_relaxed);
    fence.light();
    seen_by_light = y.load(std::memory_order_relaxed);
    meet(arrived, 4 * r + 4);
    if (seen_by_light == 0 && seen_by_heavy == 0) ++both_missed;
  }
  heavy_side.join();
  EXPECT_EQ(both_missed, 0) << "with " << (fence.expedited() ? "membarrier" : "full fences");
}

}  // namespace
