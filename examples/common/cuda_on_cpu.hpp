// The part of CUDA's kernel language that the examples' kernels use, on the CPU, so that one
// kernel source runs on the GPU (compiled by nvcc) and on the emulated device (compiled by the
// C++ compiler, launched by cuda_on_cpu::launch): thread and block indices, shared memory
// (static, and dynamic through CUDA_DYNAMIC_SHARED), __syncthreads and atomicAdd.
//
//   __global__ void reverse(double* v) {
//     __shared__ double staged[64];
//     staged[threadIdx.x] = v[threadIdx.x];
//     __syncthreads();
//     v[threadIdx.x] = staged[63 - threadIdx.x];
//   }
//   cuda_on_cpu::launch(reverse, 1, 64, 0, v);  // on the GPU: reverse<<<1, 64>>>(v)
//
// The blocks of a launch run one after the other on the calling thread, and a block's threads as
// fibers on it, each running until its next __syncthreads (or its end) before the next one runs:
// thread 0's phase completes before thread 1's begins. So a kernel that reads, without a barrier
// between, what another of its threads writes, reads it unwritten (or overwritten) here, as
// it may on the GPU, and a test that compares the result finds it. Shared memory is thread_local:
// the fibers of one launch share it, concurrent launches on other threads have their own.
// Dynamic shared memory starts each block as all ones bits (NaNs); static shared memory keeps
// what the block before left. Under ThreadSanitizer each thread of a block is a thread to it,
// ordered only by the barriers, so that it reports the rest of such reads (or writes) as data
// races, whichever thread comes first here; Clang's runtime tells apart about 200 threads at a
// time (it has 256 slots), so in larger blocks some go unreported.
// Not modelled: warps (no warp intrinsics may be used), and atomics between blocks, which run
// one at a time here.
#pragma once

#if defined(__CUDACC__)

#define CUDA_DYNAMIC_SHARED(type, name) extern __shared__ type name[]

#else

#include <atomic>
#include <cstddef>
#include <functional>
#include <tuple>
#include <utility>

#if defined(__SANITIZE_THREAD__)  // GCC
#define CUDA_ON_CPU_TSAN 1
#elif defined(__has_feature)  // Clang
#if __has_feature(thread_sanitizer)
#define CUDA_ON_CPU_TSAN 1
#endif
#endif

#define __global__
#define __device__
#define __host__
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define CUDA_DYNAMIC_SHARED(type, name) \
  type* const name = static_cast<type*>(::cuda_on_cpu::dynamic_shared_memory())

namespace cuda_on_cpu {

// CUDA's dim3 and uint3, of which the examples use x.
struct Index3 {
  unsigned x = 0, y = 0, z = 0;
};

// A launch's blocks one after the other, each block's `threads` threads as fibers on the calling
// thread, each running `thread_body` with threadIdx, blockIdx, blockDim and gridDim set;
// `shared_bytes` of dynamic shared memory per block. Precondition: 1 <= threads <= 1024, and
// thread_body does not throw (a kernel cannot).
void run_grid(unsigned blocks, unsigned threads, std::size_t shared_bytes,
              const std::function<void()>& thread_body);

// Launches `kernel` as kernel<<<blocks, threads, shared_bytes>>>(args...) does, and returns when
// it has run: the arguments are converted to the kernel's parameter types once, as a launch
// copies them.
template <class... Parameters, class... Arguments>
void launch(void (*kernel)(Parameters...), unsigned blocks, unsigned threads,
            std::size_t shared_bytes, Arguments&&... arguments) {
  const std::tuple<Parameters...> copied(std::forward<Arguments>(arguments)...);
  run_grid(blocks, threads, shared_bytes, [&] { std::apply(kernel, copied); });
}

// The block's dynamic shared memory (CUDA_DYNAMIC_SHARED), aligned for any type.
void* dynamic_shared_memory();

// __syncthreads: the calling fiber waits until every thread of its block has reached a barrier
// or ended.
void sync_threads();

}  // namespace cuda_on_cpu

// CUDA's built-in variables: the position of the thread that runs, which run_grid sets before it
// resumes a fiber. State of the calling OS thread, as the fibers of one launch run on it.
inline thread_local cuda_on_cpu::Index3 threadIdx, blockIdx, blockDim, gridDim;

inline void __syncthreads() { ::cuda_on_cpu::sync_threads(); }

// One fiber runs at a time: a plain addition is atomic here, but not to ThreadSanitizer, which
// sees a block's threads unordered between barriers, as a GPU runs them.
inline double atomicAdd(double* address, double value) {
#if defined(CUDA_ON_CPU_TSAN)
  return std::atomic_ref<double>(*address).fetch_add(value, std::memory_order_relaxed);
#else
  const double old = *address;
  *address = old + value;
  return old;
#endif
}

inline int min(int a, int b) { return a < b ? a : b; }

#endif
