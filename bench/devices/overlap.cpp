// Transfer/compute overlap: N independent tasks, each reading its own fresh input of B bytes on
// the device. With copies of the next tasks' inputs overlapping the current kernel, the wall
// time approaches max(total copy time, total compute time).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.hpp"
#include "devices/cuda_spin.hpp"
#include "devices/gpu_config.hpp"
#include "devices/suites.hpp"
#include "versa/versa.hpp"
#if VERSA_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <cstring>
#include <stdexcept>

#include "versa/cuda.hpp"
#endif

namespace bench {

namespace {

struct OverlapRun {
  double wall = 0;     // seconds, submit to wait_all
  double copies = 0;   // seconds the copies took, summed (the device's measure)
  double compute = 0;  // seconds the kernels took, summed
};

#if VERSA_HAVE_CUDA
// Bytes per second of the best of 5 host-to-device cudaMemcpy calls of `bytes` from pinned
// memory: the practical peak of the link.
double cuda_memcpy_bandwidth(std::size_t bytes) {
  void* host = nullptr;
  void* device = nullptr;
  if (cudaMallocHost(&host, bytes) != cudaSuccess || cudaMalloc(&device, bytes) != cudaSuccess)
    throw std::runtime_error("cudaMemcpy peak: cannot allocate " + std::to_string(bytes >> 20) +
                             " MiB");
  std::memset(host, 1, bytes);
  double best = 0;
  for (int i = 0; i < 6; ++i) {
    const auto start = Clock::now();
    cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
    const double seconds = seconds_since(start);
    if (i > 0) best = std::max(best, static_cast<double>(bytes) / seconds);  // 0: warm-up
  }
  cudaFree(device);
  cudaFreeHost(host);
  return best;
}
#endif

versa::Config emulated_config(double bandwidth, double latency) {
  versa::Config config;
  config.cpu_workers = 1;
  config.quiet = true;
  config.gpus = 0;
  versa::EmulatedDeviceConfig device;
  device.bandwidth_bytes_per_s = bandwidth;
  device.latency_s = latency;
  config.emulated_devices.push_back(device);
  return config;
}

OverlapRun run_overlap(const versa::Config& config, int tasks, std::size_t bytes,
                       double compute_s) {
  versa::Runtime rt{config};
  std::vector<std::vector<char>> inputs(tasks, std::vector<char>(bytes, 1));
  std::vector<versa::Handle<char>> handles;
  for (auto& input : inputs) handles.push_back(rt.data(input));
  auto consume = versa::task_type("consume")
                     .cpu([](versa::Span<const char>) {})
                     .emulated([&](versa::Span<const char>) {
                       std::this_thread::sleep_for(std::chrono::duration<double>(compute_s));
                     })
#if VERSA_HAVE_CUDA
                     .cuda([&](versa::CudaContext& gpu, versa::Span<const char>) {
                       spin_on_stream(gpu.stream(), compute_s);
                     })
#endif
                     .placement(versa::Placement::gpu_only);
  const auto start = Clock::now();
  for (auto& h : handles) rt.submit(consume, versa::read(h));
  rt.wait_all();
  const double wall = seconds_since(start);
  const versa::DeviceStatistics device = rt.statistics().at(1);
  return {wall, device.transfer_seconds, device.kernel_seconds};
}

}  // namespace

void suite_overlap(const DeviceOptions& options) {
  const int tasks = options.quick ? 60 : 200;
  const std::size_t bytes = std::size_t{1} << 20;
  // A slow link, so that the modelled copy time usually dominates the memcpy that carries the
  // data (on a busy machine the memcpy and first touch of device buffers can take longer).
  const double bandwidth = 2e9, latency = 20e-6;
  const double copy_s = latency + static_cast<double>(bytes) / bandwidth;
  std::printf("\n== overlap: %d tasks, each copying a fresh 1 MiB input to the device ==\n", tasks);
  std::printf("emulated link %.1f GB/s, %.0f us latency: %.3f ms per copy\n", bandwidth / 1e9,
              latency * 1e6, copy_s * 1e3);
  std::printf("%-10s %-14s %12s %12s %12s %8s\n", "device", "compute/copy", "wall ms", "copies ms",
              "compute ms", "ratio");
  for (double balance : {0.5, 1.0, 2.0}) {
    std::vector<double> ratios, walls, copies, computes;
    for (int r = 0; r < options.reps; ++r) {
      const OverlapRun run =
          run_overlap(emulated_config(bandwidth, latency), tasks, bytes, copy_s * balance);
      // The bound uses what the copy engine and the compute engine were measured to take:
      // each serialises its operations, so neither sum can be beaten.
      const double bound = std::max(run.copies, run.compute);
      ratios.push_back(run.wall / bound);
      walls.push_back(run.wall);
      copies.push_back(run.copies);
      computes.push_back(run.compute);
    }
    const double ratio = median(ratios);
    std::printf("%-10s %-14.1f %12.1f %12.1f %12.1f %8.3f\n", "emulated", balance,
                median(walls) * 1e3, median(copies) * 1e3, median(computes) * 1e3, ratio);
    print_result("overlap", "versa",
                 "device=emulated,compute_to_copy=" + std::to_string(balance).substr(0, 3),
                 "ratio_to_bound", ratio, "x");
  }
#if VERSA_HAVE_CUDA
  const std::optional<versa::Config> found = one_gpu(1);
  if (!found) return;
  const versa::Config& gpu = *found;
  std::vector<double> ratios, walls, copy_times, computes, versa_bandwidths, peaks;
  const std::size_t gpu_bytes = std::size_t{64} << 20;
  for (int r = 0; r < options.reps; ++r) {
    peaks.push_back(cuda_memcpy_bandwidth(gpu_bytes));
    // Measure the copies alone first, then balance compute against them.
    const OverlapRun copies = run_overlap(gpu, tasks, gpu_bytes, 0);
    versa_bandwidths.push_back(static_cast<double>(tasks) * gpu_bytes / copies.wall);
    const OverlapRun run = run_overlap(gpu, tasks, gpu_bytes, copies.copies / tasks);
    ratios.push_back(run.wall / std::max(run.copies, run.compute));
    walls.push_back(run.wall);
    copy_times.push_back(run.copies);
    computes.push_back(run.compute);
  }
  std::printf("%-10s %-14.1f %12.1f %12.1f %12.1f %8.3f\n", "cuda", 1.0, median(walls) * 1e3,
              median(copy_times) * 1e3, median(computes) * 1e3, median(ratios));
  print_result("overlap", "versa", "device=cuda,compute_to_copy=1.0", "ratio_to_bound",
               median(ratios), "x");
  // Host to device bandwidth: Versa's copies-only stream of tasks, end to end, against one
  // cudaMemcpy of the same size from pinned memory (the link's practical peak), same run.
  const double reached = median(versa_bandwidths), peak = median(peaks);
  std::printf(
      "host->device: Versa %.1f GB/s (64 MiB inputs, end to end), cudaMemcpy %.1f GB/s"
      " (pinned): %.2f\n",
      reached / 1e9, peak / 1e9, reached / peak);
  print_result("overlap", "versa", "device=cuda,bytes=64MiB", "bandwidth", reached / 1e9, "GB/s");
  print_result("overlap", "cudamemcpy", "device=cuda,bytes=64MiB", "bandwidth", peak / 1e9, "GB/s");
  print_result("overlap", "versa", "device=cuda,bytes=64MiB", "bandwidth_ratio_to_cudamemcpy",
               reached / peak, "x");
#endif
}

}  // namespace bench
