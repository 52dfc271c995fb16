// Transfer/compute overlap: N independent tasks, each reading its own fresh input of B bytes on
// the device. With copies of the next tasks' inputs overlapping the current kernel, the wall
// time approaches max(total copy time, total compute time).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.hpp"
#include "devices/cuda_spin.hpp"
#include "devices/suites.hpp"
#include "versa/versa.hpp"
#if VERSA_HAVE_CUDA
#include "versa/cuda.hpp"
#endif

namespace bench {

namespace {

struct OverlapRun {
  double wall = 0;     // seconds, submit to wait_all
  double copies = 0;   // seconds the copies took, summed (the device's measure)
  double compute = 0;  // seconds the kernels took, summed
};

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
  versa::Config gpu;
  gpu.cpu_workers = 1;
  gpu.quiet = true;
  gpu.gpus = 1;
  if (versa::Runtime(gpu).device_count() == 0) {
    std::printf("(no GPU: the cuda rows need one)\n");
    return;
  }
  std::vector<double> ratios;
  const std::size_t gpu_bytes = std::size_t{64} << 20;
  for (int r = 0; r < options.reps; ++r) {
    // Measure the copies alone first, then balance compute against them.
    const OverlapRun copies = run_overlap(gpu, tasks, gpu_bytes, 0);
    const OverlapRun run = run_overlap(gpu, tasks, gpu_bytes, copies.copies / tasks);
    ratios.push_back(run.wall / std::max(run.copies, run.compute));
  }
  std::printf("%-10s %-14.1f %12s %12s %12s %8.3f\n", "cuda", 1.0, "", "", "", median(ratios));
  print_result("overlap", "versa", "device=cuda,compute_to_copy=1.0", "ratio_to_bound",
               median(ratios), "x");
#endif
}

}  // namespace bench
