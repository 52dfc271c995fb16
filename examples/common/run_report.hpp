// What the example tools (cholesky, nbody, fmm) and the Cholesky benchmark report of a run: the
// CUDA settings a RESULT line names, the devices used, per-device transfers and per-kernel tasks
// and times, one run's worth out of a runtime that served several. One copy, so that the tools
// cannot drift apart in what they say.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "versa/versa.hpp"

namespace example {

// The CUDA settings that differ from the library's defaults, for a RESULT line's parameters
// (",streams=8", ",priority_streams=off", ",memory_pool=off", ",tasks_per_stream=1",
// ",serial_types=gemm+syrk", ",connections=8"), when a GPU was used: the environment may set
// them (VERSA_CUDA_STREAMS, VERSA_CUDA_PRIORITY_STREAMS, VERSA_CUDA_MEMORY_POOL,
// VERSA_DEVICE_TASKS_PER_STREAM, VERSA_DEVICE_SERIAL_TYPES, CUDA_DEVICE_MAX_CONNECTIONS), and
// runs under different ones must not share a key.
inline std::string cuda_settings(const versa::Config& config,
                                 const std::vector<versa::DeviceStatistics>& devices) {
  const bool gpu = std::any_of(devices.begin(), devices.end(),
                               [](const auto& d) { return d.name.rfind("cuda", 0) == 0; });
  if (!gpu) return {};
  const versa::Config effective = versa::Config::from_environment(config);
  const versa::Config defaults;
  std::string settings;
  if (effective.cuda_streams != defaults.cuda_streams)
    settings += ",streams=" + std::to_string(effective.cuda_streams);
  if (effective.cuda_priority_streams != defaults.cuda_priority_streams)
    settings += effective.cuda_priority_streams ? ",priority_streams=on" : ",priority_streams=off";
  if (effective.cuda_memory_pool != defaults.cuda_memory_pool)
    settings += effective.cuda_memory_pool ? ",memory_pool=on" : ",memory_pool=off";
  if (effective.cuda_panel_sms != defaults.cuda_panel_sms)
    settings += ",panel_sms=" + std::to_string(effective.cuda_panel_sms);
  if (effective.device_tasks_per_stream != defaults.device_tasks_per_stream)
    settings += ",tasks_per_stream=" + std::to_string(effective.device_tasks_per_stream);
  // CUDA's hardware queues when not the 32 the runtime asks for (cuda_device.cpp).
  if (const char* queues = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
      queues != nullptr && std::string(queues) != "32")
    settings += std::string(",connections=") + queues;
  // Names joined by '+': a comma would end the parameter.
  for (std::size_t i = 0; i < effective.device_serial_types.size(); ++i)
    settings += (i == 0 ? ",serial_types=" : "+") + effective.device_serial_types[i];
  return settings;
}

// The runtime's counters only grow, and one runtime serves every repetition (its performance
// model calibrates on the first), so one run's transfers are a difference of two snapshots.
inline std::vector<versa::DeviceStatistics> statistics_since(
    const versa::Runtime& rt, const std::vector<versa::DeviceStatistics>& before) {
  std::vector<versa::DeviceStatistics> devices = rt.statistics();
  for (std::size_t d = 0; d < devices.size(); ++d) {
    devices[d].bytes_to_device -= before[d].bytes_to_device;
    devices[d].bytes_to_host -= before[d].bytes_to_host;
    devices[d].bytes_from_peers -= before[d].bytes_from_peers;
    devices[d].evictions -= before[d].evictions;
  }
  return devices;
}

// Per task type and device kind, what ran since `before`, an earlier rt.task_statistics():
// tasks, kernel seconds and bytes moved, by the same reasoning as statistics_since. The medians
// stay those of the runtime's whole life: medians do not subtract.
inline std::vector<versa::TaskStatistics> task_statistics_since(
    const versa::Runtime& rt, const std::vector<versa::TaskStatistics>& before) {
  std::vector<versa::TaskStatistics> all = rt.task_statistics();
  for (versa::TaskStatistics& now : all)
    for (const versa::TaskStatistics& then : before)
      if (then.task_type == now.task_type && then.device_kind == now.device_kind) {
        now.tasks -= then.tasks;
        now.kernel_seconds -= then.kernel_seconds;
        now.bytes_moved -= then.bytes_moved;
      }
  return all;
}

// The figures of task type `type` on device kind `kind` in `all`; zeros when none ran there.
inline versa::TaskStatistics task_statistics_of(const std::vector<versa::TaskStatistics>& all,
                                                const std::string& type, const std::string& kind) {
  for (const versa::TaskStatistics& t : all)
    if (t.task_type == type && t.device_kind == kind) return t;
  versa::TaskStatistics none;
  none.task_type = type;
  none.device_kind = kind;
  return none;
}

// One of a tool's kernels: the short name its report gives it and its task type's name.
struct Kernel {
  const char* label;
  const char* task_type;
};

// The device kinds on which any of `kernels` ran, "cpu" first, then by name.
inline std::vector<std::string> kinds_that_ran(const std::vector<versa::TaskStatistics>& all,
                                               const std::vector<Kernel>& kernels) {
  std::vector<std::string> kinds;
  for (const versa::TaskStatistics& t : all)
    for (const Kernel& kernel : kernels)
      if (t.tasks > 0 && t.task_type == kernel.task_type &&
          std::find(kinds.begin(), kinds.end(), t.device_kind) == kinds.end())
        kinds.push_back(t.device_kind);
  std::sort(kinds.begin(), kinds.end(), [](const std::string& a, const std::string& b) {
    return (a == "cpu") != (b == "cpu") ? a == "cpu" : a < b;
  });
  return kinds;
}

// The report's lines of tasks per kernel, one per device kind that ran any, under its "tasks"
// line:
//               cpu       potrf 8 trsm 28 syrk 28 gemm 56
inline void print_tasks_per_kind(const std::vector<versa::TaskStatistics>& all,
                                 const std::vector<Kernel>& kernels) {
  for (const std::string& kind : kinds_that_ran(all, kernels)) {
    std::printf("            %-9s", kind.c_str());
    for (const Kernel& kernel : kernels)
      std::printf(
          " %s %llu", kernel.label,
          static_cast<unsigned long long>(task_statistics_of(all, kernel.task_type, kind).tasks));
    std::printf("\n");
  }
}

// The report's "kernel time" lines, one per device kind that ran any of `kernels`: seconds per
// kernel as the device measured them,
//   kernel time emulated  potrf 0.002 trsm 0.010 syrk 0.009 gemm 0.041 s (last run)
// and on the CPU, after them, their share of the workers' time over `wall_seconds`, which shows
// what the schedule left idle (": 97.1% of 2 workers x time").
inline void print_kernel_times(const std::vector<versa::TaskStatistics>& all,
                               const std::vector<Kernel>& kernels, int cpu_workers,
                               double wall_seconds) {
  for (const std::string& kind : kinds_that_ran(all, kernels)) {
    std::printf("kernel time %-9s", kind.c_str());
    double total = 0;
    for (const Kernel& kernel : kernels) {
      const double seconds = task_statistics_of(all, kernel.task_type, kind).kernel_seconds;
      std::printf(" %s %.3f", kernel.label, seconds);
      total += seconds;
    }
    std::printf(" s (last run)");
    if (kind == "cpu")
      std::printf(": %.1f%% of %d workers x time", 100.0 * total / (cpu_workers * wall_seconds),
                  cpu_workers);
    std::printf("\n");
  }
}

// Summed over the accelerators only: entry 0, the CPU, works on host memory and moves nothing.
struct Transfers {
  std::uint64_t to_device = 0;
  std::uint64_t to_host = 0;
  std::uint64_t between_devices = 0;  // over peer links, no host link crossed
  std::uint64_t evictions = 0;
};

inline Transfers accelerator_transfers(const std::vector<versa::DeviceStatistics>& devices) {
  Transfers sum;
  for (std::size_t d = 1; d < devices.size(); ++d) {
    sum.to_device += devices[d].bytes_to_device;
    sum.to_host += devices[d].bytes_to_host;
    sum.between_devices += devices[d].bytes_from_peers;
    sum.evictions += devices[d].evictions;
  }
  return sum;
}

// The "transfers" line of the report: what crossed the host links and the peer links, and the
// evictions, in `devices` (statistics of one run).
inline void print_transfers(const std::vector<versa::DeviceStatistics>& devices) {
  const Transfers moved = accelerator_transfers(devices);
  std::printf(
      "transfers   %.1f MiB host->device, %.1f MiB device->host, %.1f MiB device->device, %llu "
      "evictions (last run)\n",
      static_cast<double>(moved.to_device) / (1 << 20),
      static_cast<double>(moved.to_host) / (1 << 20),
      static_cast<double>(moved.between_devices) / (1 << 20),
      static_cast<unsigned long long>(moved.evictions));
}

// The "devices" line of the report, without its newline so that a tool can add a remark.
inline void print_devices(int cpu_workers, const std::vector<versa::DeviceStatistics>& devices) {
  std::printf("devices     cpu: %d workers", cpu_workers);
  for (std::size_t d = 1; d < devices.size(); ++d) std::printf(", %s", devices[d].name.c_str());
}

// The devices really used, which under "auto" or on a machine short of GPUs differ from those
// asked for: cpu[<sep>gpu[:N]][<sep>emulated:K]. The separator is the tool's: the scripts that
// read its RESULT lines expect it.
inline std::string devices_used(const std::vector<versa::DeviceStatistics>& devices,
                                char separator) {
  const std::string sep(1, separator);
  std::string used = "cpu";
  int gpus = 0, emulated = 0;
  for (std::size_t d = 1; d < devices.size(); ++d)
    (devices[d].name.rfind("cuda", 0) == 0 ? gpus : emulated) += 1;
  if (gpus > 0) used += gpus == 1 ? sep + "gpu" : sep + "gpu:" + std::to_string(gpus);
  if (emulated > 0) used += sep + "emulated:" + std::to_string(emulated);
  return used;
}

}  // namespace example
