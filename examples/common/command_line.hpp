// What the command-line tools share: the example tools (cholesky, nbody, fmm, uts, and their MPI
// versions) and the benchmarks. The options every tool words alike (on option_parser.hpp, which
// holds the rules every tool follows), the body of main(), and, for the examples, the --devices
// list, the runtime built from it and the per-device and per-kernel figures they print. One copy,
// so that the tools cannot drift apart in what they accept or say.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "option_parser.hpp"
#include "versa/versa.hpp"

namespace example {

// The body of a tool's main(): parses the command line into the options bound to `parser`, then
// returns run()'s exit status. Bad input found while running (std::invalid_argument) is a wrong
// call (status 2); any other error is reported as "<tool>: <what>" with status 1.
template <class Run>
int run_tool(OptionParser& parser, int argc, char** argv, Run&& run) {
  if (const std::optional<int> status = parser.parse(argc, argv)) return *status;
  try {
    return run();
  } catch (const std::invalid_argument& e) {
    return wrong_call(parser.name(), e.what());
  } catch (const std::exception& e) {
    std::cerr << parser.name() << ": " << e.what() << "\n";
    return 1;
  }
}

// The whole main() of a tool whose options are one struct: makes the tool's OptionParser (named
// `name` in its messages, described by `description` in its help), binds the options with
// add_options(parser, options) and returns run(options)'s exit status by run_tool's rules.
template <class Options, class AddOptions, class Run>
int tool_main(int argc, char** argv, const std::string& name, const std::string& description,
              AddOptions&& add_options, Run&& run) {
  OptionParser parser{name, description};
  Options options;
  add_options(parser, options);
  return run_tool(parser, argc, argv, [&] { return run(options); });
}

// Adds an integer option `name` bound to `target`, which takes a positive value and shows
// `target`'s value as its default; `type_name` stands for the value in the help.
template <class T>
Option& add_positive_option(OptionParser& parser, const std::string& name, T& target,
                            const std::string& type_name, const std::string& description) {
  return parser.option(name, target, description).type_name(type_name).positive().show_default();
}

// Adds a list option `name` bound to `target`: items separated by commas, each a positive
// integer; `type_name` stands for the list in the help.
template <class T>
Option& add_positive_list_option(OptionParser& parser, const std::string& name,
                                 std::vector<T>& target, const std::string& type_name,
                                 const std::string& description) {
  return parser.option(name, target, description).type_name(type_name).comma_separated().positive();
}

// Adds an option whose text `parse` reads into `target` (parse: std::string -> T, throwing
// std::invalid_argument with a message that need not name the option). A value that `parse`
// refuses fails the call, with the option's name and the thrown message; `target` keeps its value
// when the option is not given.
template <class T, class Parse>
Option& add_parsed_option(OptionParser& parser, const std::string& name, T& target, Parse parse,
                          const std::string& description) {
  return parser.option(
      name, [&target, parse](const std::string& text) { target = parse(text); }, description);
}

// Adds --workers W: the CPU workers of a tool's runtime, by default one per core (0).
inline Option& add_workers_option(OptionParser& parser, int& workers) {
  return parser.option("--workers", workers, "CPU workers (default: one per core)")
      .type_name("W")
      .positive();
}

// Adds --workers W for a tool that runs on the ranks of an MPI job: the CPU workers of each
// rank's runtime. Ranks share the machine, so the default (`workers`' value) is small and shown.
inline Option& add_rank_workers_option(OptionParser& parser, int& workers) {
  return add_positive_option(parser, "--workers", workers, "W", "CPU workers per rank");
}

// Adds --repeat R: `what` is done R times and the median time reported ("factor R times").
inline Option& add_repeat_option(OptionParser& parser, int& repeat, const std::string& what) {
  return add_positive_option(parser, "--repeat", repeat, "R", what + " and report the median time");
}

// Adds --trace FILE: a Chrome trace of the runtime's life, which spans `runs` ("all
// repetitions").
inline Option& add_trace_option(OptionParser& parser, std::string& trace, const std::string& runs) {
  return parser.option("--trace", trace, "write a Chrome trace of the run (" + runs + ") to FILE")
      .type_name("FILE");
}

// The --devices list as given and what it asks for; by default "auto". The list is kept as text
// for messages that quote it back to the user.
struct Devices {
  std::string list = "auto";
  bool gpu = true;            // use the GPUs found
  bool gpu_required = false;  // named explicitly: finding none is an error, not a fallback
  int emulated = 0;
  // gpu:I items, in order (Config::cuda_devices): one device each, the same GPU possibly
  // several times. Empty: every GPU found, when `gpu`.
  std::vector<int> gpu_entries;

  // Whether anything besides the CPU may take tasks (so GPU-only placement and device memory
  // caps mean something).
  bool accelerators() const { return gpu || emulated > 0; }
};

// Reads a --devices list. "auto" means every GPU found but none required, so one command line
// serves machines with and without a GPU. Any other list must name cpu, because the CPU workers
// run the host side, and may add gpu (all GPUs, which must exist) and emulated[:K] (K emulated
// accelerators, 1 by default; the items add up, as gpu:I items do: emulated,emulated is two).
// Throws std::invalid_argument naming the bad item.
inline Devices parse_devices(const std::string& list) {
  if (list == "auto") return Devices{};
  Devices devices{list, false, false, 0, {}};
  bool cpu = false;
  bool every_gpu = false;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    if (item == "cpu") {
      cpu = true;
    } else if (item == "gpu") {
      devices.gpu = devices.gpu_required = every_gpu = true;
    } else if (item.rfind("gpu:", 0) == 0) {
      const std::string ordinal = item.substr(4);
      char* end = nullptr;
      errno = 0;
      const long i = std::strtol(ordinal.c_str(), &end, 10);
      if (errno != 0 || end == ordinal.c_str() || *end != '\0' || i < 0 || i > 63)
        throw std::invalid_argument("'" + item + "': I in gpu:I must be a GPU number from 0 to 63");
      devices.gpu = devices.gpu_required = true;
      devices.gpu_entries.push_back(static_cast<int>(i));
    } else if (item == "emulated") {
      devices.emulated += 1;
    } else if (item.rfind("emulated:", 0) == 0) {
      const std::string count = item.substr(9);
      char* end = nullptr;
      errno = 0;
      const long k = std::strtol(count.c_str(), &end, 10);
      if (errno != 0 || end == count.c_str() || *end != '\0' || k < 1 ||
          k > std::numeric_limits<int>::max())
        throw std::invalid_argument("'" + item + "': K in emulated:K must be a positive integer");
      if (k > std::numeric_limits<int>::max() - devices.emulated)
        throw std::invalid_argument("'" + list + "': too many emulated devices");
      devices.emulated += static_cast<int>(k);
    } else {
      throw std::invalid_argument("unknown device '" + item +
                                  "' (expected auto, or cpu with gpu, gpu:I or emulated:K)");
    }
    start = comma + 1;
  }
  if (every_gpu && !devices.gpu_entries.empty())
    throw std::invalid_argument("'" + list +
                                "' names gpu (every GPU) and gpu:I (one GPU) together: use one");
  if (!cpu)
    throw std::invalid_argument("'" + list +
                                "' must include cpu (the CPU workers run the host side)");
  return devices;
}

// Adds --devices LIST to `parser`, read into `devices`.
inline Option& add_devices_option(OptionParser& parser, Devices& devices) {
  return add_parsed_option(parser, "--devices", devices, parse_devices,
                           "devices to use: auto (default: the CPU and every GPU found), cpu,\n"
                           "cpu,gpu (all GPUs, which must exist), cpu,gpu:I,gpu:J (those GPUs,\n"
                           "one device per item: cpu,gpu:0,gpu:0 makes two devices of GPU 0),\n"
                           "cpu,emulated:K (K emulated accelerators with peer links between\n"
                           "them), or a mix, e.g.\n"
                           "cpu,gpu,emulated:1")
      .type_name("LIST");
}

// The runtime only knows which devices exist once it has started, so a required GPU can be
// checked no earlier: throws std::invalid_argument when --devices names gpu and there is none.
// The topology goes to stderr to keep stdout for the figures.
inline void announce(const versa::Runtime& rt, const Devices& devices) {
  std::fprintf(stderr, "%s\n", rt.topology_summary().c_str());
  const std::size_t gpus = rt.statistics().size() - 1 - static_cast<std::size_t>(devices.emulated);
  if (devices.gpu_required && gpus == 0)
    throw std::invalid_argument("--devices lists gpu, but no GPU can be used here");
  if (!devices.gpu_entries.empty() && gpus != devices.gpu_entries.size())
    throw std::invalid_argument("--devices lists " + std::to_string(devices.gpu_entries.size()) +
                                " GPU devices, but " + std::to_string(gpus) +
                                " can be used here: " + rt.topology_summary());
}

// The tools' own runtime settings; the rest stays at the library's defaults. Quiet because
// announce prints the topology itself, to stderr.
inline versa::Config runtime_config(const Devices& devices, int workers, const std::string& trace) {
  versa::Config config;
  config.cpu_workers = workers;
  config.gpus = devices.gpu ? -1 : 0;
  config.cuda_devices = devices.gpu_entries;
  // Linked to each other, as the GPUs of one node are (bench/run devices-peer measures them
  // without links).
  config.emulated_devices.resize(static_cast<std::size_t>(devices.emulated));
  for (versa::EmulatedDeviceConfig& device : config.emulated_devices) device.peer_link = true;
  config.quiet = true;
  config.trace_file = trace;
  return config;
}

// The CUDA settings that differ from the library's defaults, for a RESULT line's parameters
// (",streams=8", ",priority_streams=off", ",memory_pool=off", ",tasks_per_stream=1",
// ",serial_types=gemm+syrk"), when a GPU was used: the environment may set them
// (VERSA_CUDA_STREAMS, VERSA_CUDA_PRIORITY_STREAMS, VERSA_CUDA_MEMORY_POOL,
// VERSA_DEVICE_TASKS_PER_STREAM, VERSA_DEVICE_SERIAL_TYPES), and runs under different ones must
// not share a key.
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
