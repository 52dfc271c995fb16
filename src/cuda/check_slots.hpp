// The pinned host ints that the device words checked after a task (CudaContext::check_after)
// are copied into: taken by the thread that runs the task's implementation, given back by the
// progress thread once it has read them, in any order.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "cuda/current_device.hpp"

namespace versa::detail {

class CheckSlots {
 public:
  // Allocates `count` slots of page-locked memory for GPU `ordinal`'s copies. Throws CudaError
  // when the allocation fails.
  CheckSlots(int ordinal, std::size_t count);
  CheckSlots(const CheckSlots&) = delete;
  CheckSlots& operator=(const CheckSlots&) = delete;

  // A free slot, or null when every one waits to be read. Any thread.
  int* take();
  // Frees a slot that take() gave. Any thread.
  void give_back(int* slot);

 private:
  std::unique_ptr<void, ReleaseOnDevice<void*, cudaFreeHost>> memory_;
  Mutex mutex_;
  std::vector<int*> free_ VERSA_GUARDED_BY(mutex_);
};

}  // namespace versa::detail
