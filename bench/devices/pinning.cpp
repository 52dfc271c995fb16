// What page-locking host memory costs against what it saves, on a GPU: for 256 MiB, the time
// of cudaHostRegister (and its unregistration), of a host-to-device cudaMemcpy from that pinned
// memory, and of the same copy from pageable memory. The runtime pins a handle before its first
// copy (docs/architecture.md, "Pinned host memory"); data copied once pays the registration for
// one copy, and these figures say whether that is a gain.
#include <cstdio>
#include <vector>

#include "common/harness.hpp"
#include "devices/gpu_config.hpp"
#include "devices/suites.hpp"
#if VERSA_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <cstring>
#include <stdexcept>
#include <string>
#endif

namespace bench {

#if VERSA_HAVE_CUDA
namespace {

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("pinning: ") + call + ": " + cudaGetErrorString(status));
}

struct PinningRun {
  double register_s = 0, unregister_s = 0, pinned_copy_s = 0, pageable_copy_s = 0;
};

PinningRun measure(std::size_t bytes) {
  std::vector<char> host(bytes, 1);  // touched, as an application's array is
  void* device = nullptr;
  check(cudaMalloc(&device, bytes), "cudaMalloc");
  PinningRun run;
  auto start = Clock::now();
  check(cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  run.pageable_copy_s = seconds_since(start);
  start = Clock::now();
  check(cudaHostRegister(host.data(), bytes, cudaHostRegisterPortable), "cudaHostRegister");
  run.register_s = seconds_since(start);
  start = Clock::now();
  check(cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  run.pinned_copy_s = seconds_since(start);
  start = Clock::now();
  check(cudaHostUnregister(host.data()), "cudaHostUnregister");
  run.unregister_s = seconds_since(start);
  check(cudaFree(device), "cudaFree");
  return run;
}

}  // namespace
#endif

void suite_pinning(const DeviceOptions& options) {
  std::printf("\n== pinning: page-locking 256 MiB against copying it pageable ==\n");
#if VERSA_HAVE_CUDA
  if (!cuda_gpu_present()) return;
  const std::size_t bytes = std::size_t{256} << 20;
  (void)measure(std::size_t{1} << 20);  // the context and the first allocations
  std::vector<double> reg, unreg, pinned, pageable;
  for (int r = 0; r < options.reps; ++r) {
    const PinningRun run = measure(bytes);
    reg.push_back(run.register_s);
    unreg.push_back(run.unregister_s);
    pinned.push_back(run.pinned_copy_s);
    pageable.push_back(run.pageable_copy_s);
  }
  const double gb = static_cast<double>(bytes) / 1e9;
  std::printf("%-28s %10s %10s\n", "256 MiB", "ms", "GB/s");
  const std::pair<const char*, const std::vector<double>*> rows[] = {
      {"cudaHostRegister", &reg},
      {"cudaHostUnregister", &unreg},
      {"copy to device, pinned", &pinned},
      {"copy to device, pageable", &pageable}};
  for (const auto& [name, seconds] : rows)
    std::printf("%-28s %10.2f %10.1f\n", name, median(*seconds) * 1e3, gb / median(*seconds));
  print_result("pinning", "cuda", "bytes=256MiB", "register_seconds", median(reg), "s");
  print_result("pinning", "cuda", "bytes=256MiB", "unregister_seconds", median(unreg), "s");
  print_result("pinning", "cuda", "bytes=256MiB", "pinned_copy_seconds", median(pinned), "s");
  print_result("pinning", "cuda", "bytes=256MiB", "pageable_copy_seconds", median(pageable), "s");
#else
  (void)options;
  std::printf("(built without CUDA: this suite needs a GPU)\n");
#endif
}

}  // namespace bench
