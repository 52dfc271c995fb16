// Benchmarks of heterogeneous execution, on CPU + emulated accelerator (and a GPU when present):
//   versa-bench-devices [--reps N] [--quick] overlap placement
//
// overlap    A stream of independent tasks, each reading a fresh input that must be copied to
//            the device: wall time against the bound max(total copy time, total compute time).
// placement  A mixed workload whose task types cost differently on the CPU and on the device:
//            makespan of automatic placement against the lower bound of the work balanced over
//            all workers (the fractional optimum).
//
// Device implementations wait without spinning (a real GPU kernel costs no CPU time), CPU
// implementations busy-wait, so the figures are honest on a 2-core machine.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "devices/suites.hpp"

int main(int argc, char** argv) {
  bench::DeviceOptions options;
  std::vector<std::string> suites;
  const std::map<std::string, void (*)(const bench::DeviceOptions&)> known = {
      {"overlap", bench::suite_overlap}, {"placement", bench::suite_placement}};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) {
      options.reps = std::atoi(argv[++i]);
      if (options.reps < 1) {
        std::fprintf(stderr, "--reps must be a positive integer\n");
        return 2;
      }
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (known.count(arg)) {
      suites.push_back(arg);
    } else {
      std::fprintf(stderr, "unknown argument '%s'; suites: overlap placement\n", arg.c_str());
      return 2;
    }
  }
  if (suites.empty()) suites = {"overlap", "placement"};
  for (const std::string& suite : suites) known.at(suite)(options);
  return 0;
}
