#include "emulated/compute_engine.hpp"

namespace versa::detail {

void ComputeEngine::acquire(bool high_priority) {
  MutexLock lock(mutex_);
  ++waiting_;
  if (high_priority) {
    ++high_priority_waiting_;
    freed_.wait(lock.native(), [&]() VERSA_REQUIRES(mutex_) { return free_ > 0; });
    --high_priority_waiting_;
  } else {
    freed_.wait(lock.native(),
                [&]() VERSA_REQUIRES(mutex_) { return free_ > 0 && high_priority_waiting_ == 0; });
  }
  --waiting_;
  --free_;
  // Slots may be left that the others waited out for the high-priority callers.
  if (high_priority_waiting_ == 0 && free_ > 0 && waiting_ > 0) freed_.notify_all();
}

// Every waiter is woken: one woken alone might be of low priority while one of high waits.
void ComputeEngine::release() {
  {
    MutexLock lock(mutex_);
    ++free_;
  }
  freed_.notify_all();
}

int ComputeEngine::waiting() const {
  MutexLock lock(mutex_);
  return waiting_;
}

}  // namespace versa::detail
