// The cuda device kind in builds without the CUDA backend (no nvcc, or VERSA_CUDA=OFF): it
// opens no device, and the runtime runs on the CPU and the other kinds only.
#include "device/device_registry.hpp"

namespace versa::detail {

DeviceBackend cuda_device_kind() {
  return {"cuda", ImplementationSlot::cuda,
          [](const Config&, std::vector<std::unique_ptr<Device>>&) {
            return std::string("GPUs: CUDA backend not built");
          }};
}

}  // namespace versa::detail
