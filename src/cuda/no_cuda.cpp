// open_cuda_devices for builds without the CUDA backend (no nvcc, or VERSA_CUDA=OFF): the
// runtime then runs on the CPU and emulated devices only.
#include <stdexcept>

#include "device/device.hpp"
#include "versa/reduction.hpp"

namespace versa::detail {

std::vector<std::unique_ptr<Device>> open_cuda_devices(int max_devices, std::size_t memory_limit,
                                                       std::string& note) {
  (void)max_devices;
  (void)memory_limit;
  note = "CUDA backend not built";
  return {};
}

// Reductions never run on a GPU in this build.
void cuda_fill_zero(CudaContext&, void*, std::size_t) {
  throw std::logic_error("CUDA backend not built");
}
void cuda_add(CudaContext&, double*, const double*, std::size_t) {
  throw std::logic_error("CUDA backend not built");
}
void cuda_add(CudaContext&, float*, const float*, std::size_t) {
  throw std::logic_error("CUDA backend not built");
}
void cuda_add(CudaContext&, int*, const int*, std::size_t) {
  throw std::logic_error("CUDA backend not built");
}

}  // namespace versa::detail
