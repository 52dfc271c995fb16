// The compute engine of an emulated device: up to `slots` kernels or merges run at once, the
// others wait for a slot. A slot freed goes to a kernel of a high-priority stream first, as a
// GPU's free room goes to the thread blocks of its high-priority streams (nothing running is
// preempted).
#pragma once

#include <condition_variable>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

// A mutex and a condition rather than std::counting_semaphore, whose libstdc++ 12
// implementation can miss a wake-up and sleep forever.
class ComputeEngine {
 public:
  explicit ComputeEngine(int slots) : free_(slots) {}
  // Waits for a slot: while high-priority callers wait, a slot freed goes to one of them.
  void acquire(bool high_priority = false);
  void release();
  // Callers waiting for a slot (for the tests).
  int waiting() const;

 private:
  mutable Mutex mutex_;
  std::condition_variable freed_;
  int free_ VERSA_GUARDED_BY(mutex_);
  int waiting_ VERSA_GUARDED_BY(mutex_) = 0;
  int high_priority_waiting_ VERSA_GUARDED_BY(mutex_) = 0;
};

// A slot of the engine, held while a kernel or a merge runs.
class ComputeSlot {
 public:
  explicit ComputeSlot(ComputeEngine& engine, bool high_priority = false) : engine_(engine) {
    engine_.acquire(high_priority);
  }
  ~ComputeSlot() { engine_.release(); }
  ComputeSlot(const ComputeSlot&) = delete;
  ComputeSlot& operator=(const ComputeSlot&) = delete;

 private:
  ComputeEngine& engine_;
};

}  // namespace versa::detail
