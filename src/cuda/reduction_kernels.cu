// The GPU side of versa::sum<T>(): element-wise addition of one buffer into another, queued on
// the implementation's stream.
#include <stdexcept>
#include <string>

#include "versa/cuda.hpp"

namespace versa::detail {

namespace {

template <class T>
__global__ void add_kernel(T* into, const T* from, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride)
    into[i] += from[i];
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(status));
}

template <class T>
void launch_add(CudaContext& context, T* into, const T* from, std::size_t count) {
  if (count == 0) return;
  constexpr unsigned threads = 256;
  // Enough blocks to fill an H100 several times over; the loop strides over the rest.
  const std::size_t wanted = (count + threads - 1) / threads;
  const unsigned blocks = static_cast<unsigned>(wanted < 4096 ? wanted : 4096);
  add_kernel<<<blocks, threads, 0, context.stream()>>>(into, from, count);
  check(cudaGetLastError(), "launching the sum kernel");
}

}  // namespace

void cuda_fill_zero(CudaContext& context, void* data, std::size_t bytes) {
  check(cudaMemsetAsync(data, 0, bytes, context.stream()), "cudaMemsetAsync");
}

void cuda_add(CudaContext& context, double* into, const double* from, std::size_t count) {
  launch_add(context, into, from, count);
}
void cuda_add(CudaContext& context, float* into, const float* from, std::size_t count) {
  launch_add(context, into, from, count);
}
void cuda_add(CudaContext& context, int* into, const int* from, std::size_t count) {
  launch_add(context, into, from, count);
}

}  // namespace versa::detail
