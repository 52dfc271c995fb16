#include "cuda/event_pool.hpp"

#include <utility>

#include "cuda/current_device.hpp"

namespace versa::detail {

PooledEvent::PooledEvent(PooledEvent&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), event_(std::exchange(other.event_, nullptr)) {}

PooledEvent& PooledEvent::operator=(PooledEvent&& other) noexcept {
  if (this != &other) {
    reset();
    pool_ = std::exchange(other.pool_, nullptr);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void PooledEvent::reset() {
  if (event_ != nullptr) pool_->release(event_);
  pool_ = nullptr;
  event_ = nullptr;
}

EventPool::~EventPool() {
  CurrentDeviceGuard guard(ordinal_);
  MutexLock lock(mutex_);
  for (cudaEvent_t event : free_) (void)cudaEventDestroy(event);
}

cudaError_t EventPool::acquire(PooledEvent& event) {
  cudaEvent_t taken = nullptr;
  {
    MutexLock lock(mutex_);
    if (!free_.empty()) {
      taken = free_.back();
      free_.pop_back();
    }
  }
  cudaError_t status = cudaSuccess;
  if (taken == nullptr) status = cudaEventCreateWithFlags(&taken, cudaEventDefault);
  // Assigned outside the lock: an event `event` held before goes back through release().
  if (status == cudaSuccess) event = PooledEvent(this, taken);
  return status;
}

void EventPool::release(cudaEvent_t event) {
  MutexLock lock(mutex_);
  free_.push_back(event);
}

}  // namespace versa::detail
