// The GPU runtime the device suites compare on, and whether a GPU is there (bench/devices/*.cpp).
#pragma once

#include <cstdio>
#include <optional>

#include "versa/versa.hpp"
#if VERSA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace bench {

#if VERSA_HAVE_CUDA
// Whether CUDA sees a GPU, for the suites that call CUDA themselves; says so when it does not.
inline bool cuda_gpu_present() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) return true;
  (void)cudaGetLastError();
  std::printf("(no GPU: this suite needs one)\n");
  return false;
}
#endif

// `cpus` CPU workers and one GPU; nothing, after saying so, when the machine has none.
inline std::optional<versa::Config> one_gpu(int cpus) {
  versa::Config gpu;
  gpu.cpu_workers = cpus;
  gpu.quiet = true;
  gpu.gpus = 1;
  if (versa::Runtime(gpu).device_count() == 0) {
    std::printf("(no GPU: the cuda rows need one)\n");
    return std::nullopt;
  }
  return gpu;
}

}  // namespace bench
