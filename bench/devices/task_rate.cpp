// The cost of a device task: N tasks of no work placed on the device, each reading one of 64
// handles and adding into another with commute (the access pattern of the FMM's tasks), from
// submission to wait_all, in microseconds per task. On a GPU each task launches one empty
// kernel; on the emulated device the body returns at once. This is what bounds small kernels:
// the FMM at 10^7 points with groups of 256 leaves makes 54188 tasks. Then the same tasks in a
// chain, each writing the handle the one before wrote: the time from a kernel's end to the
// next one's launch (seen, released, placed, launched), which a factorisation's critical path
// pays at each step.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/harness.hpp"
#include "devices/cuda_spin.hpp"
#include "devices/gpu_config.hpp"
#include "devices/suites.hpp"
#include "versa/versa.hpp"
#if VERSA_HAVE_CUDA
#include "versa/cuda.hpp"
#endif

namespace bench {

namespace {

constexpr int handle_count = 64;

// Seconds from the first submission to wait_all's return; `chain`: each task writes handle 0
// after the one before.
double run_tasks(const versa::Config& config, int tasks, bool chain) {
  versa::Runtime rt{config};
  std::vector<std::vector<double>> data(handle_count, std::vector<double>(16, 0.0));
  std::vector<versa::Handle<double>> handles;
  for (auto& d : data) handles.push_back(rt.data(d));
  auto task = versa::task_type("empty")
                  .emulated([](versa::Span<const double>, versa::Span<double>) {})
#if VERSA_HAVE_CUDA
                  .cuda([](versa::CudaContext& gpu, versa::Span<const double>,
                           versa::Span<double>) { spin_on_stream(gpu.stream(), 0); })
#endif
                  .placement(versa::Placement::gpu_only);
  // The data goes to the device once, before the clock starts.
  for (int h = 0; h < handle_count; ++h)
    rt.submit(task, versa::read(handles[(h + 1) % handle_count]), versa::commute(handles[h]));
  rt.wait_all();
  const auto start = Clock::now();
  for (int i = 0; i < tasks; ++i) {
    if (chain) {
      rt.submit(task, versa::read(handles[1]), versa::write(handles[0]));
    } else {
      rt.submit(task, versa::read(handles[(i + 7) % handle_count]),
                versa::commute(handles[i % handle_count]));
    }
  }
  rt.wait_all();
  return seconds_since(start);
}

void report(const char* device, const versa::Config& config, int tasks, int reps, bool chain) {
  std::vector<double> per_task;
  for (int r = 0; r < reps; ++r) per_task.push_back(run_tasks(config, tasks, chain) / tasks * 1e6);
  const double us = median(per_task);
  std::printf("%-10s %-12s %10d %14.2f\n", device, chain ? "chain" : "independent", tasks, us);
  print_result("task-rate", "versa", std::string("device=") + device + (chain ? ",chain" : ""),
               "us_per_task", us, "us");
}

}  // namespace

void suite_task_rate(const DeviceOptions& options) {
  const int tasks = options.quick ? 5000 : 20000;
  std::printf("\n== task-rate: tasks of no work on the device, 64 handles, read + commute ==\n");
  std::printf("%-10s %-12s %10s %14s\n", "device", "tasks are", "tasks", "us per task");
  versa::Config emulated;
  emulated.cpu_workers = 1;
  emulated.quiet = true;
  emulated.gpus = 0;
  emulated.emulated_devices.resize(1);
  emulated.emulated_devices[0].latency_s = 0;
  emulated.emulated_devices[0].bandwidth_bytes_per_s = 0;
  const int chained = tasks / 10;
  report("emulated", emulated, tasks, options.reps, false);
  report("emulated", emulated, chained, options.reps, true);
#if VERSA_HAVE_CUDA
  if (const std::optional<versa::Config> gpu = one_gpu(1)) {
    report("cuda", *gpu, tasks, options.reps, false);
    report("cuda", *gpu, chained, options.reps, true);
  }
#endif
}

}  // namespace bench
