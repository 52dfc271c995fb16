// Runs the micro-benchmark suites on every available system in one process, so that ratios
// between systems come from the same run on the same machine state.
//
//   versa-bench-micro [--reps N] [--quick] [--systems a,b,...] [suite ...]
//   suites: round-trip spawn efficiency cholesky-dag dependencies task-count generations
//           reduction (default: all)
//
// Each measurement is the median of N runs (default 5) after one warm-up run; systems take turns
// within each repetition so that a noisy period does not favour one of them. Output: a table per
// suite and one RESULT line per (system, parameter), as CONVENTIONS.md specifies. A suite's table
// has a column for each system that implements its pattern (a System whose member is empty does
// not); NaN, a figure a system could not give, shows as "-" and has no RESULT line.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"
#include "common/harness.hpp"
#include "micro/systems.hpp"

namespace bench {

void check_reduction(const std::string& system, const double* sums, long elements, int handle,
                     int handles, long tasks) {
  double expected = 0;
  for (long i = handle; i < tasks; i += handles) expected += reduction_contribution(i);
  for (long e = 0; e < elements; ++e) {
    if (sums[e] != expected) {
      std::fprintf(stderr,
                   "reduction: %s gave a wrong sum: handle %d of %d, element %ld is %.17g, "
                   "expected %.17g (%ld tasks)\n",
                   system.c_str(), handle, handles, e, sums[e], expected, tasks);
      std::exit(1);
    }
  }
}

namespace {

struct Options {
  int reps = 5;
  bool quick = false;
  long generations_tasks = 3000;  // tasks per sample of the generations pattern, at least
  std::vector<std::string> suites;
};

const double nan = std::nan("");

// Medians of `reps` runs of `run(system)` for each system.
std::vector<double> measure(const std::vector<System>& systems, const Options& options,
                            const std::function<double(const System&)>& run) {
  std::vector<std::vector<double>> samples(systems.size());
  for (int rep = -1; rep < options.reps; ++rep) {
    for (std::size_t s = 0; s < systems.size(); ++s) {
      const double value = run(systems[s]);
      if (rep >= 0) samples[s].push_back(value);
    }
  }
  std::vector<double> medians;
  for (auto& v : samples) medians.push_back(v.empty() ? nan : median(v));
  return medians;
}

// Tables: a first column of `label_width` characters naming the parameters, then one column per
// system.
constexpr int default_label_width = 22;

void print_header(const std::string& title, const std::string& param_name,
                  const std::vector<System>& systems, int label_width = default_label_width) {
  std::printf("\n## %s\n%-*s", title.c_str(), label_width, param_name.c_str());
  for (const System& s : systems) std::printf(" %14s", s.name.c_str());
  std::printf("\n");
}

void print_row(const std::string& param, const std::vector<double>& values,
               int label_width = default_label_width) {
  std::printf("%-*s", label_width, param.c_str());
  for (double v : values) {
    if (std::isnan(v)) {
      std::printf(" %14s", "-");
    } else {
      std::printf(" %14.4g", v);
    }
  }
  std::printf("\n");
  std::fflush(stdout);
}

void report(const std::string& bench, const std::vector<System>& systems, const std::string& param,
            const std::string& metric, const std::vector<double>& values, const std::string& unit) {
  for (std::size_t s = 0; s < systems.size(); ++s)
    if (!std::isnan(values[s]))
      print_result(bench, systems[s].name, param, metric, values[s], unit);
}

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

int all_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

// Wide enough for "handles=4,elements=4096,task_us=10".
constexpr int reduction_label_width = 36;

void suite_spawn(const std::vector<System>& systems, const Options& o) {
  const long tasks = o.quick ? 50000 : 200000;
  print_header("spawn: ns per empty task (submit + run), " + std::to_string(tasks) + " tasks",
               "workers", systems);
  for (int workers : {1, all_cores()}) {
    auto values =
        measure(systems, o, [&](const System& s) { return s.spawn(workers, tasks) / tasks * 1e9; });
    const std::string param = "workers=" + std::to_string(workers);
    print_row(param, values);
    report("spawn", systems, param, "ns_per_task", values, "ns");
  }
}

void suite_efficiency(const std::vector<System>& systems, const Options& o) {
  const int workers = all_cores();
  print_header("efficiency of independent busy tasks, " + std::to_string(workers) + " workers",
               "task_us", systems);
  for (double us : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 500.0}) {
    const double target_s = o.quick ? 0.03 : 0.1;
    const long tasks =
        std::clamp(static_cast<long>(target_s * workers / (us * 1e-6)), 1000L, 200000L);
    auto values = measure(systems, o, [&](const System& s) {
      const double t = s.independent(workers, tasks, us);
      return tasks * us * 1e-6 / workers / t;
    });
    const std::string param = "task_us=" + number(us);
    print_row(param, values);
    report("efficiency", systems, param, "efficiency", values, "ratio");
  }
}

void suite_cholesky_dag(const std::vector<System>& systems, const Options& o) {
  const int workers = all_cores();
  print_header("cholesky-dag efficiency, " + std::to_string(workers) + " workers", "tiles,task_us",
               systems);
  for (int tiles : {20, 50}) {
    const long tasks = static_cast<long>(tiles) * (tiles + 1) * (tiles + 2) / 6;
    for (double us : {10.0, 50.0, 200.0}) {
      if (o.quick && tiles == 50 && us > 10) continue;
      auto values = measure(systems, o, [&](const System& s) {
        const double t = s.cholesky_dag(workers, tiles, us);
        return tasks * us * 1e-6 / workers / t;
      });
      const std::string param = "tiles=" + std::to_string(tiles) + ",task_us=" + number(us);
      print_row(param, values);
      report("cholesky-dag", systems, param, "efficiency", values, "ratio");
    }
  }
}

void suite_dependencies(const std::vector<System>& systems, const Options& o) {
  const int workers = all_cores();
  const long tasks = o.quick ? 5000 : 20000;
  print_header("dependencies: ns per extra handle, (T(k) - T(0)) / (tasks * k), " +
                   std::to_string(tasks) + " tasks reading k handles, " + std::to_string(workers) +
                   " workers",
               "handles", systems);
  const std::vector<double> base =
      measure(systems, o, [&](const System& s) { return s.dependencies(workers, tasks, 0); });
  for (int k : {1, 2, 4, 8, 16, 32, 64}) {
    auto values =
        measure(systems, o, [&](const System& s) { return s.dependencies(workers, tasks, k); });
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = (values[i] - base[i]) / (static_cast<double>(tasks) * k) * 1e9;
    const std::string param = "handles=" + std::to_string(k);
    print_row(param, values);
    report("dependencies", systems, param, "ns_per_dependency", values, "ns");
  }
}

void suite_task_count(const std::vector<System>& systems, const Options& o) {
  const int workers = all_cores();
  print_header("task-count: ns per task (1 us tasks, all pending before any runs), " +
                   std::to_string(workers) + " workers; then bytes per pending task",
               "tasks", systems);
  std::vector<std::pair<std::string, std::vector<double>>> memory_rows;
  for (long n : {1000L, 10000L, 100000L, 1000000L}) {
    if (o.quick && n > 100000) continue;
    std::vector<std::vector<double>> bytes(systems.size());
    auto values = measure(systems, o, [&](const System& s) {
      const TaskCountResult r = s.task_count(workers, n);
      bytes[&s - systems.data()].push_back(r.bytes_per_pending_task);
      return r.seconds / n * 1e9;
    });
    const std::string param = "tasks=" + std::to_string(n);
    print_row(param, values);
    report("task-count", systems, param, "ns_per_task", values, "ns");
    std::vector<double> bytes_median;
    for (auto& b : bytes) bytes_median.push_back(b.empty() || b[0] < 0 ? nan : median(b));
    report("task-count", systems, param, "bytes_per_pending_task", bytes_median, "B");
    memory_rows.emplace_back(param, bytes_median);
  }
  print_header("task-count: bytes per pending task", "tasks", systems);
  for (auto& [param, values] : memory_rows) print_row(param, values);
}

// Renaming: n writers that overwrite an item after n long readers of it. Where the writers
// declare that they overwrite (write_only), Versa gives them fresh buffers and they need not wait
// for the readers; the figure is when the last writer ends, and the speed-up is the time with
// read-modify-write writers over the time with overwriting ones, in the same run.
void suite_overwrite_after_readers(const std::vector<System>& all, const Options& o, int workers) {
  std::vector<System> systems;
  for (const System& s : all)
    if (s.overwrite_after_readers) systems.push_back(s);
  if (systems.empty()) return;
  const long n = 100;
  const double task_us = o.quick ? 50 : 200;
  print_header(
      "generations with overwriting writers: ms until the last of n writers ends (1 "
      "writer, n readers, n writers, each busy " +
          number(task_us) +
          " us; writers at "
          "priority 1), " +
          std::to_string(workers) + " workers",
      "writers", systems);
  std::vector<double> times[2];
  for (bool overwrite : {false, true}) {
    times[overwrite] = measure(systems, o, [&](const System& s) {
      return s.overwrite_after_readers(workers, n, task_us, overwrite) * 1e3;
    });
    const std::string param = "n=" + std::to_string(n) + ",task_us=" + number(task_us) +
                              ",writers=" + (overwrite ? "write_only" : "write");
    print_row(overwrite ? "write_only" : "write", times[overwrite]);
    report("generations", systems, param, "writers_done_ms", times[overwrite], "ms");
  }
  std::vector<double> speedup;
  for (std::size_t s = 0; s < systems.size(); ++s) speedup.push_back(times[0][s] / times[1][s]);
  print_row("speed-up", speedup);
  report("generations", systems, "n=" + std::to_string(n) + ",task_us=" + number(task_us),
         "write_only_speedup", speedup, "x");
}

// Each sample repeats the pattern until it has run o.generations_tasks tasks, so that a sample of
// n = 1 (three tasks, a few microseconds) is not one draw of the machine's noise.
void suite_generations(const std::vector<System>& systems, const Options& o) {
  const int workers = all_cores();
  print_header("generations: ns per task (1 writer, n readers, n writers; rounds of at least " +
                   std::to_string(o.generations_tasks) + " tasks in all), " +
                   std::to_string(workers) + " workers",
               "n", systems);
  for (long n : {1L, 10L, 100L, 1000L, 10000L}) {
    const long tasks = 2 * n + 1;
    const long rounds = std::max(1L, (o.generations_tasks + tasks - 1) / tasks);
    auto values = measure(systems, o, [&](const System& s) {
      return s.generations(workers, n, rounds) / static_cast<double>(rounds * tasks) * 1e9;
    });
    const std::string param = "n=" + std::to_string(n);
    print_row(param, values);
    report("generations", systems, param, "ns_per_task", values, "ns");
  }
  suite_overwrite_after_readers(systems, o, workers);
}

void suite_reduction(const std::vector<System>& systems, const Options& o) {
  const int workers = all_cores();
  const long tasks = o.quick ? 2000 : 20000;
  const long elements = 4096;
  const double task_us = 10;
  print_header("reduction: ns per task, " + std::to_string(tasks) + " tasks each busy-waiting " +
                   number(task_us) + " us then adding into one of `handles` arrays of " +
                   std::to_string(elements) + " doubles, " + std::to_string(workers) + " workers",
               "handles,elements,task_us", systems, reduction_label_width);
  for (int handles : {1, 4}) {
    auto values = measure(systems, o, [&](const System& s) {
      return s.reduction(workers, tasks, handles, elements, task_us) / tasks * 1e9;
    });
    const std::string param = "handles=" + std::to_string(handles) +
                              ",elements=" + std::to_string(elements) +
                              ",task_us=" + number(task_us);
    print_row(param, values, reduction_label_width);
    report("reduction", systems, param, "ns_per_task", values, "ns");
  }
}

void suite_round_trip(const std::vector<System>& systems, const Options& o) {
  const long rounds = o.quick ? 50000 : 200000;
  print_header("round-trip: ns per cache-line round trip between two threads, " +
                   std::to_string(rounds) + " rounds",
               "threads", systems);
  auto values =
      measure(systems, o, [&](const System& s) { return s.round_trip(rounds) / rounds * 1e9; });
  print_row("threads=2", values);
  report("round-trip", systems, "threads=2", "ns_per_round_trip", values, "ns");
}

// A suite, and whether a system implements its pattern (its column is left out otherwise).
struct Suite {
  void (*run)(const std::vector<System>&, const Options&);
  bool (*has)(const System&);
};

const std::map<std::string, Suite> suites = {
    {"spawn", {suite_spawn, [](const System& s) { return bool(s.spawn); }}},
    {"efficiency", {suite_efficiency, [](const System& s) { return bool(s.independent); }}},
    {"cholesky-dag", {suite_cholesky_dag, [](const System& s) { return bool(s.cholesky_dag); }}},
    {"dependencies", {suite_dependencies, [](const System& s) { return bool(s.dependencies); }}},
    {"task-count", {suite_task_count, [](const System& s) { return bool(s.task_count); }}},
    {"generations", {suite_generations, [](const System& s) { return bool(s.generations); }}},
    {"reduction", {suite_reduction, [](const System& s) { return bool(s.reduction); }}},
    {"round-trip", {suite_round_trip, [](const System& s) { return bool(s.round_trip); }}},
};
const char* const suite_order[] = {"round-trip",   "spawn",      "efficiency",  "cholesky-dag",
                                   "dependencies", "task-count", "generations", "reduction"};

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  using namespace bench;
  Options options;
  std::vector<System> all_systems;
  for (auto provider : {versa_systems, starpu_systems, openmp_systems, tbb_systems, thread_systems})
    for (System& s : provider()) all_systems.push_back(std::move(s));
  std::vector<std::string> system_names, suite_names{"all"};
  for (const System& s : all_systems) system_names.push_back(s.name);
  suite_names.insert(suite_names.end(), std::begin(suite_order), std::end(suite_order));
  std::vector<std::string> only_systems;

  example::OptionParser parser{"versa-bench-micro",
                               "Micro-benchmark suites on every system built in, in one process."};
  parser.option("suites", options.suites, "the suites to run (default: all)")
      .type_name("SUITE")
      .one_of(suite_names);
  example::add_positive_option(parser, "--reps", options.reps, "N",
                               "measured runs per figure (their median), after a warm-up");
  parser.flag("--quick", options.quick, "smaller workloads");
  example::add_positive_option(
      parser, "--generations-tasks", options.generations_tasks, "N",
      "generations: tasks per sample, at least (the pattern repeated; 1: one round)");
  // One value per --systems, split at commas: the suites that follow are not taken for systems.
  parser.option("--systems", only_systems, "the systems to run, comma-separated (default: all)")
      .type_name("LIST")
      .comma_separated()
      .one_item_per_use()
      .one_of(system_names);
  if (const std::optional<int> status = parser.parse(argc, argv)) return *status;
  if (options.suites.empty() ||
      std::find(options.suites.begin(), options.suites.end(), "all") != options.suites.end())
    options.suites.assign(std::begin(suite_order), std::end(suite_order));

  std::vector<System> systems;
  for (System& s : all_systems)
    if (only_systems.empty() ||
        std::find(only_systems.begin(), only_systems.end(), s.name) != only_systems.end())
      systems.push_back(std::move(s));
  std::printf("# systems:");
  for (const System& s : systems) std::printf(" %s", s.name.c_str());
  std::printf("\n# median of %d runs after a warm-up%s\n", options.reps,
              options.quick ? ", quick sizes" : "");
  for (const std::string& name : options.suites) {
    const Suite& suite = suites.at(name);
    std::vector<System> implementing;
    for (const System& s : systems)
      if (suite.has(s)) implementing.push_back(s);
    if (!implementing.empty()) suite.run(implementing, options);
  }
  return 0;
}
