#include <stdexcept>
#include <string>

#include "nbody_cuda.hpp"
#include "versa/cuda.hpp"

namespace nbody::cuda {

namespace {

constexpr int threads_per_block = 128;

// As in nbody.cpp: F(r) / r for squared distance r2.
__device__ double force_over_distance(double r2) {
  const double inv2 = 1.0 / r2;
  const double inv6 = inv2 * inv2 * inv2;
  return 24.0 * inv2 * inv6 * (2.0 * inv6 - 1.0);
}

// One thread per target particle; the block stages the source particles through shared memory
// a tile at a time, so each is read from device memory once per thread block.
__global__ void add_forces_kernel(const double* target, int target_count, const double* source,
                                  int source_count, double* force, bool same_block) {
  __shared__ double sx[threads_per_block], sy[threads_per_block], sz[threads_per_block];
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = k < target_count;
  const double xk = active ? target[k] : 0.0;
  const double yk = active ? target[target_count + k] : 0.0;
  const double zk = active ? target[2 * target_count + k] : 0.0;
  double fx = 0.0, fy = 0.0, fz = 0.0;
  for (int start = 0; start < source_count; start += threads_per_block) {
    const int l = start + static_cast<int>(threadIdx.x);
    if (l < source_count) {
      sx[threadIdx.x] = source[l];
      sy[threadIdx.x] = source[source_count + l];
      sz[threadIdx.x] = source[2 * source_count + l];
    }
    __syncthreads();
    const int tile = min(threads_per_block, source_count - start);
    for (int m = 0; m < tile; ++m) {
      if (same_block && start + m == k) continue;
      const double dx = xk - sx[m], dy = yk - sy[m], dz = zk - sz[m];
      const double s = force_over_distance(dx * dx + dy * dy + dz * dz);
      fx += s * dx;
      fy += s * dy;
      fz += s * dz;
    }
    __syncthreads();
  }
  if (active) {
    force[k] += fx;
    force[target_count + k] += fy;
    force[2 * target_count + k] += fz;
  }
}

__global__ void move_kernel(double* position, double* velocity, double* force, long long count,
                            double dt) {
  const long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= count) return;
  velocity[k] += dt * force[k];
  position[k] += dt * velocity[k];
  force[k] = 0.0;
}

void check_launch(const char* kernel) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(kernel) + " launch failed: " + cudaGetErrorString(status));
}

unsigned blocks_for(std::size_t count) {
  return static_cast<unsigned>((count + threads_per_block - 1) / threads_per_block);
}

}  // namespace

void add_forces(versa::CudaContext& gpu, const double* target, std::size_t target_count,
                const double* source, std::size_t source_count, double* force, bool same_block) {
  if (target_count == 0 || source_count == 0) return;
  add_forces_kernel<<<blocks_for(target_count), threads_per_block, 0, gpu.stream()>>>(
      target, static_cast<int>(target_count), source, static_cast<int>(source_count), force,
      same_block);
  check_launch("add_forces");
}

void move(versa::CudaContext& gpu, double* position, double* velocity, double* force,
          std::size_t count, double dt) {
  if (count == 0) return;
  move_kernel<<<blocks_for(count), threads_per_block, 0, gpu.stream()>>>(
      position, velocity, force, static_cast<long long>(count), dt);
  check_launch("move");
}

}  // namespace nbody::cuda
