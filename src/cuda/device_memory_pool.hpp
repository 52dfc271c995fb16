// Where a CUDA device's buffers come from: a memory pool of the device's own, allocated from and
// freed to in stream order (cudaMallocFromPoolAsync, cudaFreeAsync) on a stream that does
// nothing else. cudaMalloc and cudaFree may synchronise the whole device (cudaFree does): a
// buffer allocated or freed while tasks run would stop the kernels of every other stream from
// overlapping the ones before it, which the first tiles of a factorisation pay for, each
// allocated as it arrives. Freed memory stays in the pool for the next buffers until the device
// closes. A GPU without memory pools, or Config::cuda_memory_pool off, gets cudaMalloc and
// cudaFree.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace versa::detail {

class DeviceMemoryPool {
 public:
  // For GPU `ordinal`; with `wanted` false, or where the GPU has no memory pools, the plain
  // calls. Throws CudaError when the pool or its stream cannot be created.
  DeviceMemoryPool(int ordinal, bool wanted);
  // Waits for the frees queued, then returns the pool's memory to the GPU. Every buffer must
  // have been freed.
  ~DeviceMemoryPool();
  DeviceMemoryPool(const DeviceMemoryPool&) = delete;
  DeviceMemoryPool& operator=(const DeviceMemoryPool&) = delete;

  // Whether buffers come from the pool.
  bool pooled() const { return pool_ != nullptr; }

  // A buffer of at least one byte, usable at once on any stream of the GPU; null when the GPU
  // has no room for it. The caller has made the GPU current. Any thread.
  void* allocate(std::size_t bytes);
  // Frees `pointer` from allocate(): no work may use it any more. The caller has made the GPU
  // current. Any thread.
  void free(void* pointer);

  // Lets GPU `ordinal` read and write the pool's buffers: a peer copy from them runs on the
  // other GPU's stream. Returns whether it could.
  bool share_with(int ordinal);

 private:
  const int ordinal_;
  cudaMemPool_t pool_ = nullptr;
  cudaStream_t stream_ = nullptr;  // the pool's allocations and frees, nothing else
};

}  // namespace versa::detail
