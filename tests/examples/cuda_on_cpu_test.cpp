// CUDA's kernel language on the CPU (examples/common/cuda_on_cpu.hpp), with which the emulated
// device runs the examples' CUDA kernels: thread and block indices, static and dynamic shared
// memory, barriers, atomics; and what it shows of a kernel that lacks a barrier.
#include "cuda_on_cpu.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <thread>
#include <vector>

namespace {

constexpr unsigned block = 64;

// Each block reverses its slice of v through shared memory.
__global__ void reverse_slices(double* v) {
  __shared__ double staged[block];
  const unsigned first = blockIdx.x * blockDim.x;
  staged[threadIdx.x] = v[first + threadIdx.x];
  __syncthreads();
  v[first + threadIdx.x] = staged[blockDim.x - 1 - threadIdx.x];
}

// The same without the barrier: a thread reads its partner's slot before the partner ran.
__global__ void reverse_slices_without_barrier(double* v) {
  __shared__ double staged[block];
  const unsigned first = blockIdx.x * blockDim.x;
  staged[threadIdx.x] = v[first + threadIdx.x];
  v[first + threadIdx.x] = staged[blockDim.x - 1 - threadIdx.x];
}

// The sum of v, each block's part summed in dynamic shared memory by halves (a barrier per
// step), then added into *total.
__global__ void sum(const double* v, int n, double* total) {
  CUDA_DYNAMIC_SHARED(double, partial);
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  partial[threadIdx.x] = i < n ? v[i] : 0.0;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, partial[0]);
}

// Each thread writes where it is.
__global__ void positions(unsigned* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[4 * i] = threadIdx.x;
  out[4 * i + 1] = blockIdx.x;
  out[4 * i + 2] = blockDim.x;
  out[4 * i + 3] = gridDim.x;
}

std::vector<double> counting(std::size_t n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

TEST(CudaOnCpu, ThreadsAndBlocksKnowWhereTheyAre) {
  std::vector<unsigned> out(4 * 3 * 5);
  cuda_on_cpu::launch(positions, 3, 5, 0, out.data());
  for (unsigned b = 0; b < 3; ++b)
    for (unsigned t = 0; t < 5; ++t) {
      const unsigned* p = out.data() + 4 * (b * 5 + t);
      EXPECT_EQ(p[0], t);
      EXPECT_EQ(p[1], b);
      EXPECT_EQ(p[2], 5u);
      EXPECT_EQ(p[3], 3u);
    }
}

TEST(CudaOnCpu, ABarrierOrdersTheThreadsOfABlock) {
  std::vector<double> v = counting(3 * block);
  cuda_on_cpu::launch(reverse_slices, 3, block, 0, v.data());
  for (unsigned b = 0; b < 3; ++b)
    for (unsigned t = 0; t < block; ++t)
      ASSERT_EQ(v[b * block + t], static_cast<double>(b * block + block - 1 - t)) << b << " " << t;
}

// What makes the emulated device a check of the GPU's kernels: each thread runs to its next
// barrier before the next thread starts, so a read of another thread's shared write that no
// barrier orders sees the slot unwritten (here, the block before's value) in the first half.
// Under ThreadSanitizer, which sees the threads of a block ordered by the barriers alone, the
// reads of the second half, whose partners wrote first here, are data races.
#if defined(CUDA_ON_CPU_TSAN)
TEST(CudaOnCpuDeathTest, AMissingBarrierIsADataRace) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::vector<double> v = counting(2 * block);
  // With halt_on_error the report ends the program; without, the exit after it: status 66 both.
  EXPECT_EXIT(
      {
        cuda_on_cpu::launch(reverse_slices_without_barrier, 2, block, 0, v.data());
        std::exit(0);
      },
      ::testing::ExitedWithCode(66), "ThreadSanitizer: data race");
}
#else
TEST(CudaOnCpu, AMissingBarrierShows) {
  std::vector<double> v = counting(2 * block);
  cuda_on_cpu::launch(reverse_slices_without_barrier, 2, block, 0, v.data());
  int wrong = 0;
  for (unsigned b = 0; b < 2; ++b)
    for (unsigned t = 0; t < block; ++t)
      wrong += v[b * block + t] != static_cast<double>(b * block + block - 1 - t);
  EXPECT_EQ(wrong, 2 * static_cast<int>(block / 2));  // the first half of each block
}
#endif

TEST(CudaOnCpu, DynamicSharedMemoryAndAtomicsSumAnArray) {
  const std::vector<double> v = counting(1000);
  double total = 0;
  cuda_on_cpu::launch(sum, (1000 + 127) / 128, 128, 128 * sizeof(double), v.data(), 1000, &total);
  EXPECT_EQ(total, 999.0 * 1000 / 2);
}

// Launches on several threads at once (as on several emulated devices) keep their shared
// memory and positions apart.
TEST(CudaOnCpu, ConcurrentLaunchesOnOtherThreadsAreIndependent) {
  std::vector<std::vector<double>> arrays(4, counting(20 * block));
  std::vector<std::thread> threads;
  for (std::vector<double>& v : arrays)
    threads.emplace_back([&v] {
      for (int repeat = 0; repeat < 2; ++repeat)
        cuda_on_cpu::launch(reverse_slices, 20, block, 0, v.data());
    });
  for (std::thread& t : threads) t.join();
  for (const std::vector<double>& v : arrays) EXPECT_EQ(v, counting(20 * block));
}

}  // namespace
