// What the command-line tools share: the example tools (cholesky, nbody, fmm, uts, and their MPI
// versions) and the benchmarks. The options every tool words alike (on option_parser.hpp, which
// holds the rules every tool follows), the body of main(), and, for the examples, the --devices
// list and the runtime built from it (the figures they print: run_report.hpp). One copy, so that
// the tools cannot drift apart in what they accept.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "option_parser.hpp"
#include "versa/versa.hpp"

namespace example {

// The body of a tool's main(): parses the command line into the options bound to `parser`, then
// returns run()'s exit status. Bad input found while running (std::invalid_argument) is a wrong
// call (status 2); a problem too large for the memory is said in those words, and any other
// error is reported as "<tool>: <what>", both with status 1.
template <class Run>
int run_tool(OptionParser& parser, int argc, char** argv, Run&& run) {
  if (const std::optional<int> status = parser.parse(argc, argv)) return *status;
  try {
    return run();
  } catch (const std::invalid_argument& e) {
    return wrong_call(parser.name(), e.what());
  } catch (const std::bad_alloc&) {
    std::cerr << parser.name()
              << ": out of memory: the problem does not fit in this machine's memory (try a "
                 "smaller size)\n";
    return 1;
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

// Adds --device-memory M (MiB), read into `mib` (0: no cap), with the check that `devices`
// names an accelerator: a cap with none would silently do nothing. `help` says what it is for.
inline void add_device_memory_option(OptionParser& parser, long& mib, const Devices& devices,
                                     const std::string& help) {
  parser.option("--device-memory", mib, help).type_name("M").positive();
  parser.validate([&mib, &devices] {
    if (mib > 0 && !devices.accelerators())
      throw OptionError("--device-memory",
                        "needs a gpu or emulated device among --devices " + devices.list);
  });
}

// The runtime only knows which devices exist once it has started, so a required GPU can be
// checked no earlier: throws std::invalid_argument when --devices names gpu and there is none.
inline void check_devices(const versa::Runtime& rt, const Devices& devices) {
  const std::size_t gpus = rt.statistics().size() - 1 - static_cast<std::size_t>(devices.emulated);
  if (devices.gpu_required && gpus == 0)
    throw std::invalid_argument("--devices lists gpu, but no GPU can be used here");
  if (!devices.gpu_entries.empty() && gpus != devices.gpu_entries.size())
    throw std::invalid_argument("--devices lists " + std::to_string(devices.gpu_entries.size()) +
                                " GPU devices, but " + std::to_string(gpus) +
                                " can be used here: " + rt.topology_summary());
}

// Prints the topology to stderr (to keep stdout for the figures), then check_devices.
inline void announce(const versa::Runtime& rt, const Devices& devices) {
  std::fprintf(stderr, "%s\n", rt.topology_summary().c_str());
  check_devices(rt, devices);
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

}  // namespace example
