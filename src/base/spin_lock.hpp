// A test-and-test-and-set spin lock for the tiny critical sections of handles and ready queues
// (a few integer updates and pointer swaps). Uncontended it costs one atomic exchange; under
// contention it spins on a plain load, then yields, so a preempted holder does not stall the
// other threads of an oversubscribed machine for a whole time slice.
#pragma once

#include <atomic>
#include <thread>

#include "base/thread_annotations.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define VERSA_CPU_RELAX() _mm_pause()
#else
#define VERSA_CPU_RELAX() std::atomic_signal_fence(std::memory_order_seq_cst)
#endif

namespace versa::detail {

class VERSA_CAPABILITY("mutex") SpinLock {
 public:
  void lock() VERSA_ACQUIRE() {
    for (int spins = 0;; ++spins) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < 64) {
          VERSA_CPU_RELAX();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  bool try_lock() VERSA_TRY_ACQUIRE(true) {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() VERSA_RELEASE() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

class VERSA_SCOPED_CAPABILITY SpinGuard {
 public:
  explicit SpinGuard(SpinLock& lock) VERSA_ACQUIRE(lock) : lock_(lock) { lock_.lock(); }
  ~SpinGuard() VERSA_RELEASE() { lock_.unlock(); }
  SpinGuard(const SpinGuard&) = delete;
  SpinGuard& operator=(const SpinGuard&) = delete;

 private:
  SpinLock& lock_;
};

}  // namespace versa::detail
