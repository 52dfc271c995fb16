#include "cuda/device_memory_pool.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "cuda/cuda_check.hpp"
#include "cuda/current_device.hpp"

namespace versa::detail {

DeviceMemoryPool::DeviceMemoryPool(int ordinal, bool wanted) : ordinal_(ordinal) {
  int supported = 0;
  if (!wanted ||
      cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, ordinal) != cudaSuccess ||
      supported == 0) {
    (void)cudaGetLastError();
    return;
  }
  cudaMemPoolProps properties{};
  properties.allocType = cudaMemAllocationTypePinned;
  properties.location.type = cudaMemLocationTypeDevice;
  properties.location.id = ordinal;
  throw_if_failed(cudaMemPoolCreate(&pool_, &properties), "cudaMemPoolCreate");
  // Kept, not returned to the GPU at each synchronisation: the next buffers reuse it without
  // mapping memory again. The destructor returns it.
  std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
  cudaError_t status = cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep);
  if (status == cudaSuccess) {
    CurrentDeviceGuard guard(ordinal);
    status = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
  }
  if (status != cudaSuccess) {
    (void)cudaMemPoolDestroy(pool_);
    pool_ = nullptr;
    throw_if_failed(status, "setting up the device memory pool");
  }
}

DeviceMemoryPool::~DeviceMemoryPool() {
  if (pool_ == nullptr) return;
  CurrentDeviceGuard guard(ordinal_);
  (void)cudaStreamSynchronize(stream_);
  (void)cudaStreamDestroy(stream_);
  (void)cudaMemPoolDestroy(pool_);
  (void)cudaGetLastError();
}

void* DeviceMemoryPool::allocate(std::size_t bytes) {
  void* pointer = nullptr;
  // At least one byte: an allocation of 0 succeeds with a null pointer, which reads as failure.
  bytes = std::max<std::size_t>(bytes, 1);
  cudaError_t status = pool_ != nullptr ? cudaMallocFromPoolAsync(&pointer, bytes, pool_, stream_)
                                        : cudaMalloc(&pointer, bytes);
  // The allocation is ordered on the pool's stream only: waited for (the stream holds nothing
  // else, so at once), the buffer may be used on every stream.
  if (status == cudaSuccess && pool_ != nullptr) {
    status = cudaStreamSynchronize(stream_);
    if (status != cudaSuccess) (void)cudaFreeAsync(pointer, stream_);
  }
  if (status != cudaSuccess) {
    // Out of memory is not sticky, but it stays this thread's last error; cleared so that it is
    // not reported later as a failure of an unrelated kernel launch.
    (void)cudaGetLastError();
    return nullptr;
  }
  return pointer;
}

void DeviceMemoryPool::free(void* pointer) {
  if (pointer == nullptr) return;
  // The work that used it has completed: freed in the pool's stream order, nothing waits.
  const cudaError_t status = pool_ != nullptr ? cudaFreeAsync(pointer, stream_) : cudaFree(pointer);
  if (status != cudaSuccess) (void)cudaGetLastError();
}

bool DeviceMemoryPool::share_with(int ordinal) {
  if (pool_ == nullptr || ordinal == ordinal_) return true;
  cudaMemAccessDesc access{};
  access.location.type = cudaMemLocationTypeDevice;
  access.location.id = ordinal;
  access.flags = cudaMemAccessFlagsProtReadWrite;
  if (cudaMemPoolSetAccess(pool_, &access, 1) == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

}  // namespace versa::detail
