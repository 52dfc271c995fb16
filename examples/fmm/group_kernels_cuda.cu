#include <stdexcept>
#include <string>

#include "group_kernels_cuda.hpp"
#include "versa/cuda.hpp"

namespace fmm::cuda {

namespace {

constexpr int threads_per_block = 128;

// One thread block per leaf pair and direction (blockIdx.y: 0 fills the first leaf from the
// second, 1 the second from the first; a leaf with itself only once). The threads take the
// target leaf's points, the block stages the source leaf's points through shared memory a tile
// at a time. Several pairs share a target leaf, so the sums go in with atomic adds.
__global__ void p2p_kernel(const int* entries, const double* points_a, int count_a,
                           const double* points_b, int count_b, double* results_a,
                           double* results_b) {
  __shared__ double sx[threads_per_block], sy[threads_per_block], sz[threads_per_block],
      sq[threads_per_block];
  const int* entry = entries + 4 * blockIdx.x;
  const bool reverse = blockIdx.y == 1;
  const bool self = points_a == points_b && entry[0] == entry[2];
  if (reverse && self) return;
  const double* target = reverse ? points_b : points_a;
  const double* source = reverse ? points_a : points_b;
  const int target_n = reverse ? count_b : count_a, source_n = reverse ? count_a : count_b;
  double* result = reverse ? results_b : results_a;
  const int target_first = entry[reverse ? 2 : 0], target_count = entry[reverse ? 3 : 1];
  const int source_first = entry[reverse ? 0 : 2], source_count = entry[reverse ? 1 : 3];
  for (int base = 0; base < target_count; base += threads_per_block) {
    const int t = base + static_cast<int>(threadIdx.x);
    const bool active = t < target_count;
    const int k = target_first + (active ? t : 0);
    const double x = target[k], y = target[target_n + k], z = target[2 * target_n + k];
    double sum = 0, sum_x = 0, sum_y = 0, sum_z = 0;
    for (int start = 0; start < source_count; start += threads_per_block) {
      const int l = start + static_cast<int>(threadIdx.x);
      if (l < source_count) {
        const int s = source_first + l;
        sx[threadIdx.x] = source[s];
        sy[threadIdx.x] = source[source_n + s];
        sz[threadIdx.x] = source[2 * source_n + s];
        sq[threadIdx.x] = source[3 * source_n + s];
      }
      __syncthreads();
      const int tile = min(threads_per_block, source_count - start);
      for (int m = 0; m < tile; ++m) {
        const double dx = x - sx[m], dy = y - sy[m], dz = z - sz[m];
        const double r2 = dx * dx + dy * dy + dz * dz;
        const double inverse_r = r2 > 0 ? rsqrt(r2) : 0.0;
        const double q_over_r = sq[m] * inverse_r;
        const double q_over_r3 = q_over_r * inverse_r * inverse_r;
        sum += q_over_r;
        sum_x -= q_over_r3 * dx;
        sum_y -= q_over_r3 * dy;
        sum_z -= q_over_r3 * dz;
      }
      __syncthreads();
    }
    if (active) {
      atomicAdd(&result[k], sum);
      atomicAdd(&result[target_n + k], sum_x);
      atomicAdd(&result[2 * target_n + k], sum_y);
      atomicAdd(&result[3 * target_n + k], sum_z);
    }
  }
}

// Entries of an M2L work list per thread block: their source vectors are staged in shared
// memory (up to 8 x 614 doubles, 39 KB at order 13), and each operator value read serves all
// of them.
constexpr int m2l_entries_per_block = 8;

// One thread block per m2l_entries_per_block consecutive entries (offset, target cell, source
// cell); each thread takes rows of C_d. The entries are sorted by offset, so a block's entries
// mostly share one C_d; where its entries change offset, it goes through each run in turn. A
// target cell appears once per offset, in several blocks: the sums go in with atomic adds.
__global__ void m2l_kernel(const int* work, int entry_count, const double* operators, int rank,
                           const double* sources, double* targets, double root_width) {
  constexpr int per_block = m2l_entries_per_block;
  const int* entries = work + 1;                           // after the header, the cells' level
  const double scale = 1.0 / ldexp(root_width, -work[0]);  // 1 / the cells' width
  extern __shared__ double staged[];  // staged[k * per_block + j]: entry j's source, value k
  const int first = static_cast<int>(blockIdx.x) * per_block;
  const int count = min(per_block, entry_count - first);
  const int* entry = entries + 3 * first;
  for (int v = static_cast<int>(threadIdx.x); v < per_block * rank; v += blockDim.x) {
    const int j = v / rank, k = v % rank;
    staged[k * per_block + j] =
        j < count ? sources[static_cast<size_t>(entry[3 * j + 2]) * rank + k] : 0.0;
  }
  __syncthreads();
  for (int run = 0; run < count;) {
    const int offset = entry[3 * run];
    int end = run + 1;
    while (end < count && entry[3 * end] == offset) ++end;
    const double* op = operators + static_cast<size_t>(offset) * rank * rank;
    for (int i = static_cast<int>(threadIdx.x); i < rank; i += blockDim.x) {
      double sum[per_block] = {};
      for (int k = 0; k < rank; ++k) {
        const double c = op[static_cast<size_t>(k) * rank + i];
#pragma unroll
        for (int j = 0; j < per_block; ++j) sum[j] += c * staged[k * per_block + j];
      }
#pragma unroll
      for (int j = 0; j < per_block; ++j)
        if (j >= run && j < end)
          atomicAdd(&targets[static_cast<size_t>(entry[3 * j + 1]) * rank + i], sum[j] * scale);
    }
    run = end;
  }
}

void check_launch(const char* kernel) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(kernel) + " launch failed: " + cudaGetErrorString(status));
}

}  // namespace

void p2p(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* points_a, std::size_t count_a, const double* points_b, std::size_t count_b,
         double* results_a, double* results_b, bool inner) {
  const std::size_t entries = work_size > 0 ? (work_size - 1) / 4 : 0;
  if (entries == 0) return;
  if (inner) {
    points_b = points_a;
    count_b = count_a;
    results_b = results_a;
  }
  const dim3 grid(static_cast<unsigned>(entries), 2);
  p2p_kernel<<<grid, threads_per_block, 0, gpu.stream()>>>(
      work + 1, points_a, static_cast<int>(count_a), points_b, static_cast<int>(count_b), results_a,
      results_b);
  check_launch("fmm p2p");
}

void m2l(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* operators, std::size_t rank, const double* sources, double* targets,
         double root_width) {
  const std::size_t entries = work_size > 0 ? (work_size - 1) / 3 : 0;
  if (entries == 0) return;
  const auto blocks =
      static_cast<unsigned>((entries + m2l_entries_per_block - 1) / m2l_entries_per_block);
  const std::size_t shared = m2l_entries_per_block * rank * sizeof(double);
  m2l_kernel<<<blocks, threads_per_block, shared, gpu.stream()>>>(work, static_cast<int>(entries),
                                                                  operators, static_cast<int>(rank),
                                                                  sources, targets, root_width);
  check_launch("fmm m2l");
}

}  // namespace fmm::cuda
