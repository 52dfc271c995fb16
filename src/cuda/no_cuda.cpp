// The cuda device kind in builds without the CUDA backend (no nvcc, or VERSA_CUDA=OFF): it
// opens no device, and the runtime runs on the CPU and the other kinds only.
#include <stdexcept>

#include "device/device_registry.hpp"
#include "versa/reduction.hpp"

namespace versa::detail {

DeviceBackend cuda_backend() {
  return {"cuda", ImplementationSlot::cuda,
          [](const Config&, std::vector<std::unique_ptr<Device>>&) {
            return std::string("GPUs: CUDA backend not built");
          }};
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
