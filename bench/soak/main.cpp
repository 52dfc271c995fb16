// The soak test's in-process part: the fuzz tests' random programs (tests/support/
// fuzz_program.hpp) run one after another for a given time, each under a new runtime and checked
// against its sequential run, and the resident memory taken after the first and the last program
// (nothing may grow across programs).
//
//   versa-bench-soak --kind cpu|devices [--seconds S]   fuzz programs for S seconds
//   versa-bench-soak --kind big [--tasks N] [--handles H]
//                                    one program of N tasks over H handles (10^6 and 10^4) on
//                                    2 CPU workers and 2 emulated devices
//
// cpu: 2000-task programs on 1, 2 and 4 workers, in turn with every scheduling option and with
// injected failures. devices: 1000-task programs on 2 workers and 1 or 2 emulated devices of
// 256 bytes (every task evicts), bodies on the devices' streams or at launch, with and without
// high-priority streams and failures, 1 to 3 tasks launched per stream, with and without the
// programs' tasks serial. bench/run soak runs both,
// the distributed fuzzer and the big program (bench/soak/run.py).
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>

#include "command_line.hpp"
#include "common/harness.hpp"
#include "support/fuzz_program.hpp"

namespace {

using namespace versa::fuzz;

// Resident memory of this process, in MiB (/proc/self/statm).
double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

// Whether the parallel run ended as the sequential one: a failure reported exactly when the
// program has one, every handle failed in both or valid in both with the same values, and every
// task that ran observed the same values. Says what differs on stderr.
bool same_outcome(const Program& program, const Outcome& actual, const Outcome& expected,
                  const std::string& label) {
  std::string wrong;
  if (actual.reported.empty() == has_failures(program))
    wrong = actual.reported.empty() ? "no failure reported" : "unexpected: " + actual.reported;
  else if (actual.failed != expected.failed)
    wrong = "failed handles differ";
  else if (actual.observed != expected.observed)
    wrong = "observed values differ";
  for (std::size_t h = 0; wrong.empty() && h < expected.failed.size(); ++h)
    for (int k = 0; k < width && !expected.failed[h]; ++k)
      if (actual.data[h * width + k] != expected.data[h * width + k])
        wrong = "handle " + std::to_string(h) + " differs";
  if (!wrong.empty())
    std::fprintf(stderr, "versa-bench-soak: %s: %s\n", label.c_str(), wrong.c_str());
  return wrong.empty();
}

versa::Config base_config(int workers) {
  versa::Config config;
  config.cpu_workers = workers;
  config.gpus = 0;
  config.pin_workers = false;
  config.quiet = true;
  // The injected failures' reports: what matters is checked against the sequential run.
  config.diagnostics = [](const std::string&) {};
  return config;
}

// The configuration and program of the `n`-th program of a kind.
struct Drawn {
  versa::Config config;
  Program program;
  std::string label;
};

Drawn draw(const std::string& kind, std::uint64_t n) {
  const bool failures = n % 3 == 2;
  const int handles = n % 2 ? 16 : 48;
  Drawn d;
  if (kind == "cpu") {
    static constexpr int worker_counts[] = {1, 2, 4};
    const int workers = worker_counts[n % 3];
    d.config = base_config(workers);
    switch ((n / 3) % 4) {
      case 1:
        d.config.caller_runs_tasks = false;
        break;
      case 2:
        d.config.defer_registration = true;
        break;
      case 3:
        d.config.locality = true;
        break;
      default:
        d.config.submission_window = 64;
    }
    d.program = random_program(n * 7919 + 17, 2000, handles, failures ? 200 : 0);
    d.label = "cpu program " + std::to_string(n) + " (" + std::to_string(workers) + " workers)";
  } else {
    const int devices = 1 + static_cast<int>(n % 2);
    d.config = base_config(2);
    d.config.emulated_devices.resize(static_cast<std::size_t>(devices));
    for (versa::EmulatedDeviceConfig& device : d.config.emulated_devices) {
      device.memory_bytes = 256;
      device.bandwidth_bytes_per_s = 0;
      device.latency_s = 0;
      device.bodies_at_launch = (n / 2) % 2 == 1;
      device.priority_streams = (n / 4) % 2 == 1;
    }
    d.config.device_tasks_per_stream = 1 + static_cast<int>((n / 8) % 3);
    // The programs' tasks one after another on each device's first stream, their children on
    // the others (Config::device_serial_types).
    if ((n / 24) % 2 == 1) d.config.device_serial_types = {"task"};
    d.program = random_program(n * 104729 + 29, 1000, handles, failures ? 200 : 0);
    d.label = "devices program " + std::to_string(n) + " (" + std::to_string(devices) + " devices)";
  }
  return d;
}

int soak(const std::string& kind, double seconds) {
  const auto start = bench::Clock::now();
  std::uint64_t passed = 0, failed = 0;
  double rss_first = 0, rss_last = 0;
  for (std::uint64_t n = 0; n == 0 || bench::seconds_since(start) < seconds; ++n) {
    const Drawn d = draw(kind, n);
    bool ok = false;
    try {
      ok = same_outcome(d.program, parallel(d.program, d.config), sequential(d.program), d.label);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "versa-bench-soak: %s: %s\n", d.label.c_str(), e.what());
    }
    (ok ? passed : failed) += 1;
    rss_last = resident_mib();
    if (n == 0) rss_first = rss_last;
  }
  std::printf(
      "soak %s: %llu programs passed, %llu failed in %.0f s; resident %.1f MiB after the "
      "first, %.1f MiB after the last\n",
      kind.c_str(), static_cast<unsigned long long>(passed),
      static_cast<unsigned long long>(failed), bench::seconds_since(start), rss_first, rss_last);
  const std::string param = "kind=" + kind;
  bench::print_result("soak", "versa", param, "programs_passed", static_cast<double>(passed),
                      "programs");
  bench::print_result("soak", "versa", param, "programs_failed", static_cast<double>(failed),
                      "programs");
  bench::print_result("soak", "versa", param, "rss_first_mib", rss_first, "MiB");
  bench::print_result("soak", "versa", param, "rss_last_mib", rss_last, "MiB");
  return failed == 0 ? 0 : 1;
}

// One large program on CPU + 2 emulated devices whose memory holds a tenth of the handles.
int big(int tasks, int handles) {
  versa::Config config = base_config(2);
  config.emulated_devices.resize(2);
  for (versa::EmulatedDeviceConfig& device : config.emulated_devices) {
    device.memory_bytes = static_cast<std::size_t>(handles) * width * sizeof(Value) / 10;
    device.bandwidth_bytes_per_s = 0;
    device.latency_s = 0;
  }
  const Program program = random_program(1000003, tasks, handles);
  const Outcome expected = sequential(program);
  const auto start = bench::Clock::now();
  const Outcome actual = parallel(program, config);
  const double seconds = bench::seconds_since(start);
  const bool ok = same_outcome(program, actual, expected, "the big program");
  std::uint64_t on_devices = 0;
  for (std::size_t d = 1; d < actual.statistics.size(); ++d)
    on_devices += actual.statistics[d].tasks;
  std::printf(
      "soak big: %d tasks over %d handles on 2 CPU workers + 2 emulated devices in %.1f s "
      "(%llu on the devices): %s\n",
      tasks, handles, seconds, static_cast<unsigned long long>(on_devices),
      ok ? "equal to the sequential run" : "DIFFERENT from the sequential run");
  const std::string param = "kind=devices,tasks=" + std::to_string(tasks);
  bench::print_result("soak", "versa", param, "big_program_passed", ok ? 1 : 0, "programs");
  bench::print_result("soak", "versa", param, "seconds", seconds, "s");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kind = "cpu";
  int seconds = 60;
  int tasks = 1000000;
  int handles = 10000;
  example::OptionParser parser{
      "versa-bench-soak",
      "The soak test's in-process part: fuzz programs in a loop, or one big program."};
  parser.option("--kind", kind, "cpu, devices or big")
      .one_of({"cpu", "devices", "big"})
      .show_default();
  example::add_positive_option(parser, "--seconds", seconds, "S",
                               "how long to run fuzz programs (cpu, devices)");
  example::add_positive_option(parser, "--tasks", tasks, "N", "tasks of the big program");
  example::add_positive_option(parser, "--handles", handles, "H", "handles of the big program");
  if (const std::optional<int> status = parser.parse(argc, argv)) return *status;
  return kind == "big" ? big(tasks, handles) : soak(kind, seconds);
}
