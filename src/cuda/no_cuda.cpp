// open_cuda_devices for builds without the CUDA backend (no nvcc, or VERSA_CUDA=OFF): the
// runtime then runs on the CPU and emulated devices only.
#include "core/device.hpp"

namespace versa::detail {

std::vector<std::unique_ptr<Device>> open_cuda_devices(int max_devices, std::size_t memory_limit,
                                                       std::string& note) {
  (void)max_devices;
  (void)memory_limit;
  note = "CUDA backend not built";
  return {};
}

}  // namespace versa::detail
