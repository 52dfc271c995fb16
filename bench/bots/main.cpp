// bench/run bots: the BOTS kernels on Versa against sequential C++, OpenMP tasks (libgomp) and
// oneTBB, in one process. For each kernel, every system with every worker count runs the kernel
// once per round, in --reps rounds; the table and the RESULT lines give the median seconds, the
// speedup over the sequential run's median and, for the kernels that measure task overhead,
// nanoseconds per task. Every run is verified with the suite's own check; a failed check fails the
// run (exit status 1): a wrong answer yields no figure.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../common/harness.hpp"
#include "alignment.hpp"
#include "command_line.hpp"
#include "fft.hpp"
#include "fib.hpp"
#include "floorplan.hpp"
#include "health.hpp"
#include "nqueens.hpp"
#include "sort.hpp"
#include "sparselu.hpp"
#include "strassen.hpp"

namespace {

using bench::Clock;
using bench::seconds_since;

// One system's way of running a kernel with a number of workers. The Versa runtime is made before
// the clock starts and its threads stopped after it stops, as the peers' thread pools are warm.
struct System {
  std::string name;
  std::function<double(int workers)> run;  // seconds
};

// A kernel's input and its runs on every system, behind one interface.
class Benchmark {
 public:
  virtual ~Benchmark() = default;
  virtual std::string input() const = 0;
  virtual std::uint64_t tasks() const = 0;
  virtual double run_sequential() = 0;
  virtual std::vector<System> parallel_systems() = 0;
  virtual std::string verify() const = 0;
};

template <class Kernel>
class KernelBenchmark final : public Benchmark {
 public:
  explicit KernelBenchmark(bots::Scale scale) : kernel_(scale) {}

  std::string input() const override { return kernel_.input(); }
  std::uint64_t tasks() const override { return kernel_.tasks(); }
  std::string verify() const override { return kernel_.verify(); }

  double run_sequential() override {
    kernel_.reset();
    const auto start = Clock::now();
    kernel_.run_sequential();
    return seconds_since(start);
  }

  std::vector<System> parallel_systems() override {
    std::vector<System> systems;
    systems.push_back({"versa", [this](int workers) {
                         versa::Config config;
                         config.cpu_workers = workers;
                         config.gpus = 0;
                         config.quiet = true;
                         versa::Runtime rt{config};
                         kernel_.reset();
                         const auto start = Clock::now();
                         kernel_.run_versa(rt);
                         return seconds_since(start);
                       }});
#ifdef _OPENMP
    systems.push_back(
        {"openmp", [this](int workers) { return timed([&] { kernel_.run_openmp(workers); }); }});
    if constexpr (requires(Kernel k) { k.run_openmp_depend(1); })
      systems.push_back({"openmp-depend", [this](int workers) {
                           return timed([&] { kernel_.run_openmp_depend(workers); });
                         }});
#endif
#ifdef VERSA_BENCH_TBB
    if constexpr (requires(Kernel k) { k.run_tbb(1); })
      systems.push_back(
          {"tbb", [this](int workers) { return timed([&] { kernel_.run_tbb(workers); }); }});
#endif
    return systems;
  }

 private:
  double timed(const std::function<void()>& run) {
    kernel_.reset();
    const auto start = Clock::now();
    run();
    return seconds_since(start);
  }

  Kernel kernel_;
};

struct KernelEntry {
  const char* name;
  std::function<std::unique_ptr<Benchmark>(bots::Scale)> make;
};

template <class Kernel>
KernelEntry entry() {
  return {Kernel::name, [](bots::Scale scale) -> std::unique_ptr<Benchmark> {
            return std::make_unique<KernelBenchmark<Kernel>>(scale);
          }};
}

std::vector<KernelEntry> all_kernels() {
  return {entry<bots::Fib>(),      entry<bots::NQueens>(),   entry<bots::Sort>(),
          entry<bots::SparseLu>(), entry<bots::Strassen>(),  entry<bots::Fft>(),
          entry<bots::Health>(),   entry<bots::Floorplan>(), entry<bots::Alignment>()};
}

std::string kernel_names() {
  std::string names;
  for (const KernelEntry& kernel : all_kernels()) {
    if (!names.empty()) names += ',';
    names += kernel.name;
  }
  return names;
}

struct Options {
  std::vector<std::string> kernels;
  std::vector<int> workers = {2};
  std::vector<std::string> systems = {"sequential", "versa", "openmp", "openmp-depend", "tbb"};
  bots::Scale scale = bots::Scale::bench;
  int reps = 5;
};

void add_options(example::OptionParser& parser, Options& o) {
  parser.option("--kernels", o.kernels, "kernels (default: all): " + kernel_names())
      .comma_separated()
      .type_name("LIST")
      .check([](const std::string& name) -> std::string {
        for (const KernelEntry& kernel : all_kernels())
          if (name == kernel.name) return {};
        return "unknown kernel '" + name + "' (expected one of " + kernel_names() + ")";
      });
  example::add_positive_list_option(parser, "--workers", o.workers, "2", "worker counts");
  parser
      .option("--systems", o.systems,
              "systems: sequential, versa, openmp, openmp-depend (where a kernel has it), tbb")
      .comma_separated()
      .type_name("LIST");
  example::add_parsed_option(parser, "--scale", o.scale, bots::parse_scale,
                             "the benchmark's inputs (default) or small ones")
      .type_name("bench|small");
  example::add_positive_option(parser, "--reps", o.reps, "N",
                               "repetitions per measurement (the median is reported)");
  parser.flag(
      "--quick", [&o] { o.reps = 3; }, "3 repetitions");
}

// One system with one worker count, and the seconds of its runs so far.
struct Measurement {
  std::string system;
  int workers;
  std::function<double()> run;
  std::vector<double> seconds;
  bool wrong = false;  // a run failed the kernel's check (said on stderr): no figure
};

// Every measurement once per round, the rounds repeated `reps` times: a burst of load on a shared
// machine then falls on every system alike, not on whichever ran its repetitions during it. Every
// run is verified.
void measure_interleaved(const char* kernel, const Benchmark& benchmark,
                         std::vector<Measurement>& measurements, int reps) {
  for (int rep = 0; rep < reps; ++rep)
    for (Measurement& m : measurements) {
      if (m.wrong) continue;
      m.seconds.push_back(m.run());
      const std::string wrong = benchmark.verify();
      if (wrong.empty()) continue;
      std::fprintf(stderr, "bots: %s on %s: %s\n", kernel, m.system.c_str(), wrong.c_str());
      m.wrong = true;
    }
}

int run(const Options& o) {
  std::printf("# bots: median of %d interleaved rounds\n%-10s %-22s %-13s %7s %10s %8s %9s\n",
              o.reps, "kernel", "input", "system", "workers", "seconds", "speedup", "ns/task");
  int status = 0;
  for (const KernelEntry& kernel : all_kernels()) {
    if (!o.kernels.empty() &&
        std::find(o.kernels.begin(), o.kernels.end(), kernel.name) == o.kernels.end())
      continue;
    const std::unique_ptr<Benchmark> benchmark = kernel.make(o.scale);
    // The sequential run first: every speedup is over its median.
    std::vector<Measurement> measurements;
    measurements.push_back({"sequential", 1, [&] { return benchmark->run_sequential(); }, {}});
    const std::vector<System> systems = benchmark->parallel_systems();
    for (int workers : o.workers)
      for (const System& system : systems)
        if (bench::chosen(o.systems, system.name))
          measurements.push_back(
              {system.name, workers, [&system, workers] { return system.run(workers); }, {}});
    measure_interleaved(kernel.name, *benchmark, measurements, o.reps);
    if (measurements.front().wrong) return 1;
    const double base = bench::median(measurements.front().seconds);
    for (const Measurement& m : measurements) {
      if (m.wrong) {
        status = 1;
        continue;
      }
      if (m.system == "sequential" && !bench::chosen(o.systems, "sequential")) continue;
      const double seconds = bench::median(m.seconds);
      const std::string param = "kernel=" + std::string(kernel.name) +
                                ",workers=" + std::to_string(m.workers) +
                                (o.scale == bots::Scale::small ? ",scale=small" : "");
      const bool per_task = benchmark->tasks() != 0 && m.system != "sequential";
      const double ns_per_task =
          per_task ? seconds * 1e9 / static_cast<double>(benchmark->tasks()) : 0.0;
      std::printf("%-10s %-22s %-13s %7d %10.4f %8.2f ", kernel.name, benchmark->input().c_str(),
                  m.system.c_str(), m.workers, seconds, base / seconds);
      if (per_task)
        std::printf("%9.1f\n", ns_per_task);
      else
        std::printf("%9s\n", "-");
      bench::print_result("bots", m.system, param, "seconds", seconds, "s");
      bench::print_result("bots", m.system, param, "speedup", base / seconds, "x");
      if (per_task) bench::print_result("bots", m.system, param, "ns_per_task", ns_per_task, "ns");
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return example::tool_main<Options>(
      argc, argv, "versa-bench-bots",
      "The Barcelona OpenMP Tasks Suite's kernels: Versa against sequential C++, OpenMP tasks\n"
      "and oneTBB, each run verified.",
      add_options, run);
}
