// Benchmarks of heterogeneous execution, on CPU + emulated accelerator (and a GPU when present):
//   versa-bench-devices [--reps N] [--quick] overlap placement task-rate pinning concurrency
//
// overlap    A stream of independent tasks, each reading a fresh input that must be copied to
//            the device: wall time against the bound max(total copy time, total compute time).
// placement  A mixed workload whose task types cost differently on the CPU and on the device:
//            makespan of automatic placement against the lower bound of the work balanced over
//            all workers (the fractional optimum).
// task-rate  Tasks of no work on the device: microseconds per task, submission to wait_all.
// pinning    On a GPU: cudaHostRegister of 256 MiB against a pinned and a pageable copy of it.
// concurrency On a GPU, with no runtime: each of the Cholesky's kernels alone (and trtri, trmm:
//            a solve through the inverse), then the kernels on 1 and 4 streams, and what events,
//            allocations and frees between them cost the overlap (not run by default).
//
// Device implementations wait without spinning (a real GPU kernel costs no CPU time), CPU
// implementations busy-wait, so the figures are honest on a 2-core machine.
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "devices/suites.hpp"

int main(int argc, char** argv) {
  // The hardware queues Versa's runtime asks for (src/cuda/cuda_device.cpp), for the suites that
  // use CUDA without a runtime (concurrency) too, whichever runs first, unless the environment
  // says.
  ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  bench::DeviceOptions options;
  std::vector<std::string> suites;
  const std::map<std::string, void (*)(const bench::DeviceOptions&)> known = {
      {"overlap", bench::suite_overlap},
      {"placement", bench::suite_placement},
      {"task-rate", bench::suite_task_rate},
      {"pinning", bench::suite_pinning},
      {"concurrency", bench::suite_concurrency}};
  std::vector<std::string> names;
  for (const auto& [name, suite] : known) names.push_back(name);
  example::OptionParser parser{
      "versa-bench-devices",
      "Heterogeneous execution on CPU + emulated accelerator (and a GPU when present)."};
  parser.option("suites", suites, "the suites to run (default: all)")
      .type_name("SUITE")
      .one_of(names);
  example::add_positive_option(parser, "--reps", options.reps, "N",
                               "repetitions per figure (their median)");
  parser.flag("--quick", options.quick, "smaller workloads");
  if (const std::optional<int> status = parser.parse(argc, argv)) return *status;
  if (suites.empty()) suites = {"overlap", "placement", "task-rate", "pinning"};
  for (const std::string& suite : suites) known.at(suite)(options);
  return 0;
}
