// Reusable CUDA events of one device. Every queued operation needs two (start and end, to know
// when it finished and how long it ran); creating and destroying them per operation would cost
// two driver calls each, so they are recycled.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class EventPool;

// One event taken from an EventPool, returned to it on destruction. Move-only; empty when
// default-constructed or moved from.
class PooledEvent {
 public:
  PooledEvent() = default;
  PooledEvent(PooledEvent&& other) noexcept;
  PooledEvent& operator=(PooledEvent&& other) noexcept;
  ~PooledEvent() { reset(); }

  cudaEvent_t get() const { return event_; }
  explicit operator bool() const { return event_ != nullptr; }
  // Returns the event to its pool now; the event must not be pending in a stream any more
  // (completed, or never recorded).
  void reset();

 private:
  friend class EventPool;
  PooledEvent(EventPool* pool, cudaEvent_t event) : pool_(pool), event_(event) {}

  EventPool* pool_ = nullptr;
  cudaEvent_t event_ = nullptr;
};

class EventPool {
 public:
  explicit EventPool(int ordinal) : ordinal_(ordinal) {}
  // Destroys the pooled events. Every PooledEvent must have been returned.
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // Sets `event` to a free event (with timing, cudaEventDefault), creating one when none is
  // free. Precondition: the pool's device is current on the calling thread (the device's entry
  // points guarantee it; setting it here would cost a call per operation). Thread-safe.
  cudaError_t acquire(PooledEvent& event);

 private:
  friend class PooledEvent;
  void release(cudaEvent_t event);

  const int ordinal_;
  Mutex mutex_;
  std::vector<cudaEvent_t> free_ VERSA_GUARDED_BY(mutex_);
};

}  // namespace versa::detail
