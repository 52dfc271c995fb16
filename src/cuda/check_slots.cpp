#include "cuda/check_slots.hpp"

#include "cuda/cuda_check.hpp"

namespace versa::detail {

CheckSlots::CheckSlots(int ordinal, std::size_t count) : memory_(nullptr, {ordinal}) {
  CurrentDeviceGuard guard(ordinal);
  void* memory = nullptr;
  throw_if_failed(cudaHostAlloc(&memory, count * sizeof(int), cudaHostAllocDefault),
                  "cudaHostAlloc");
  memory_.reset(memory);
  MutexLock lock(mutex_);
  for (std::size_t i = count; i-- > 0;) free_.push_back(static_cast<int*>(memory) + i);
}

int* CheckSlots::take() {
  MutexLock lock(mutex_);
  if (free_.empty()) return nullptr;
  int* slot = free_.back();
  free_.pop_back();
  return slot;
}

void CheckSlots::give_back(int* slot) {
  MutexLock lock(mutex_);
  free_.push_back(slot);
}

}  // namespace versa::detail
