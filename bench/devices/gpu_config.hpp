// The GPU runtime the device suites compare on (bench/devices/*.cpp).
#pragma once

#include <cstdio>
#include <optional>

#include "versa/versa.hpp"

namespace bench {

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
