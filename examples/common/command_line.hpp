// What the example command-line tools (cholesky, nbody) share: their error reporting, the walk
// over the options, the --devices list and the runtime built from it, and the per-device figures
// they print. One copy, so that the tools cannot drift apart in what they accept or say.
// Header-only: each tool is one source file, and a library for this would serve no one else.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "versa/versa.hpp"

namespace example {

// The --devices list as given and what it asks for. The list is kept as text for messages that
// quote it back to the user.
struct Devices {
  std::string list = "auto";
  bool gpu = false;           // use the GPUs found
  bool gpu_required = false;  // named explicitly: finding none is an error, not a fallback
  int emulated = 0;

  // Whether anything besides the CPU may take tasks (so GPU-only placement and device memory
  // caps mean something).
  bool accelerators() const { return gpu || emulated > 0; }
};

// A tool's identity for its messages. Bad input ends the tool with exit status 2, apart from
// run-time failures (status 1), so that scripts can tell a wrong call from a failed run.
class CommandLine {
 public:
  // Both strings must outlive the object: the tools pass literals.
  CommandLine(const char* program, const char* usage) : program_(program), usage_(usage) {}

  [[noreturn]] void fail(const std::string& message) const {
    std::fprintf(stderr, "%s: %s\n(see --help)\n", program_, message.c_str());
    std::exit(2);
  }

  [[noreturn]] void help() const {
    std::fputs(usage_, stdout);
    std::exit(0);
  }

  // Whole-string decimal only: "12x", "" and values past long fail rather than being cut short.
  long parse_long(const std::string& flag, const char* text, long low) const {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0')
      fail(flag + " expects an integer, not '" + text + "'");
    if (value < low) fail(flag + " must be at least " + std::to_string(low) + ", not " + text);
    return value;
  }

  // "auto" means every GPU found but none required, so one command line serves machines with and
  // without a GPU. Any other list must name cpu, because the CPU workers run the host side.
  Devices parse_devices(const std::string& list) const {
    Devices devices;
    devices.list = list;
    if (list == "auto") {
      devices.gpu = true;
      return devices;
    }
    std::size_t start = 0;
    bool cpu = false;
    while (start <= list.size()) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      const std::string item = list.substr(start, comma - start);
      if (item == "cpu") {
        cpu = true;
      } else if (item == "gpu") {
        devices.gpu = devices.gpu_required = true;
      } else if (item.rfind("emulated", 0) == 0) {
        const std::string count = item.size() > 9 && item[8] == ':' ? item.substr(9) : "1";
        if (item != "emulated" && item[8] != ':')
          fail("unknown device '" + item + "' in --devices");
        devices.emulated = static_cast<int>(parse_long("--devices emulated:", count.c_str(), 1));
      } else {
        fail("unknown device '" + item + "' in --devices (expected cpu, gpu or emulated:K)");
      }
      start = comma + 1;
    }
    if (!cpu) fail("--devices must include cpu (the CPU workers run the host side)");
    return devices;
  }

  // The runtime only knows which devices exist once it has started, so a required GPU can be
  // checked no earlier. The topology goes to stderr to keep stdout for the figures.
  void announce(const versa::Runtime& rt, const Devices& devices) const {
    std::fprintf(stderr, "%s\n", rt.topology_summary().c_str());
    if (devices.gpu_required &&
        rt.statistics().size() == 1 + static_cast<std::size_t>(devices.emulated))
      fail("--devices lists gpu, but no GPU can be used here");
  }

 private:
  const char* program_;
  const char* usage_;
};

// The options in order, for a tool's own if-else chain over the flags. --help and -h are
// answered here, wherever they stand, so that every tool answers them alike.
class Arguments {
 public:
  Arguments(const CommandLine& cli, int argc, char** argv) : cli_(cli), argc_(argc), argv_(argv) {}

  // Moves to the next option; false once there is none.
  bool next() {
    if (++index_ >= argc_) return false;
    flag_ = argv_[index_];
    if (flag_ == "--help" || flag_ == "-h") cli_.help();
    return true;
  }

  const std::string& flag() const { return flag_; }

  // Consumes the option's value, whatever it looks like: "--n --help" gives --n the value
  // "--help" rather than guessing that the value was forgotten.
  const char* value() {
    if (index_ + 1 >= argc_) cli_.fail(flag_ + " expects a value");
    return argv_[++index_];
  }

  long integer(long low) { return cli_.parse_long(flag_, value(), low); }

  [[noreturn]] void unknown() const { cli_.fail("unknown option '" + flag_ + "'"); }

 private:
  const CommandLine& cli_;
  int argc_;
  char** argv_;
  int index_ = 0;
  std::string flag_;
};

// The tools' own runtime settings; the rest stays at the library's defaults. Quiet because
// CommandLine::announce prints the topology itself, to stderr.
inline versa::Config runtime_config(const Devices& devices, int workers, const std::string& trace) {
  versa::Config config;
  config.cpu_workers = workers;
  config.gpus = devices.gpu ? -1 : 0;
  config.emulated_devices.resize(static_cast<std::size_t>(devices.emulated));
  config.quiet = true;
  config.trace_file = trace;
  return config;
}

// The runtime's counters only grow, and one runtime serves every repetition (its performance
// model calibrates on the first), so one run's transfers are a difference of two snapshots.
inline std::vector<versa::DeviceStatistics> statistics_since(
    const versa::Runtime& rt, const std::vector<versa::DeviceStatistics>& before) {
  std::vector<versa::DeviceStatistics> devices = rt.statistics();
  for (std::size_t d = 0; d < devices.size(); ++d) {
    devices[d].bytes_to_device -= before[d].bytes_to_device;
    devices[d].bytes_to_host -= before[d].bytes_to_host;
    devices[d].evictions -= before[d].evictions;
  }
  return devices;
}

// Summed over the accelerators only: entry 0, the CPU, works on host memory and moves nothing.
struct Transfers {
  std::uint64_t to_device = 0;
  std::uint64_t to_host = 0;
  std::uint64_t evictions = 0;
};

inline Transfers accelerator_transfers(const std::vector<versa::DeviceStatistics>& devices) {
  Transfers sum;
  for (std::size_t d = 1; d < devices.size(); ++d) {
    sum.to_device += devices[d].bytes_to_device;
    sum.to_host += devices[d].bytes_to_host;
    sum.evictions += devices[d].evictions;
  }
  return sum;
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
