#pragma once

#include <string>

namespace versa {

// Settings of a Runtime. Every field has a default that suits a whole machine; environment
// variables override some of them for convenience (see docs/configuration.md):
//   VERSA_NCPU=<n>        cpu_workers
//   VERSA_PIN=0|1         pin_workers
//   VERSA_TRACE=<file>    trace_file
// A value out of range, here or in the environment, makes the Runtime constructor throw
// std::invalid_argument naming the field or variable.
//
//   versa::Config config;
//   config.cpu_workers = 4;
//   versa::Runtime rt{config};
struct Config {
  // Number of CPU worker threads. 0 means one per core that hwloc reports. At most 4096.
  int cpu_workers = 0;

  // Pin each worker thread to one core (round-robin over the cores hwloc reports).
  bool pin_workers = true;

  // When not empty, a Chrome trace-event JSON file (chrome://tracing, Perfetto) is written here
  // when the Runtime is destroyed: one track per worker, one slice per task. Costs nothing when
  // empty.
  std::string trace_file;

  // Read the environment variables listed above, returning `base` with them applied.
  // Throws std::invalid_argument naming the variable when a value is malformed or out of range.
  static Config from_environment(Config base);
};

}  // namespace versa
