// bench/run uts: the Unbalanced Tree Search on Versa against sequential C++, OpenMP tasks and
// oneTBB, in one process. For each tree, every system searches it once per worker count in each of
// --reps interleaved rounds; the table and the RESULT lines give the median seconds and the
// speedup over the sequential search's median. A system whose figures differ from the sequential
// search's fails the run (exit status 1): a wrong search yields no figure.
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/harness.hpp"
#include "command_line.hpp"
#include "sequential_search.hpp"
#include "systems.hpp"

namespace {

struct Options {
  std::vector<std::string> trees = {"T1", "T3"};
  std::vector<int> workers = {1, 2};
  std::vector<std::string> systems = {"sequential", "versa", "versa-steady", "openmp", "tbb"};
  uts::SearchOptions search;
  // A search takes 0.1-0.4 s, so on a shared machine a burst of load moves the median of 5
  // rounds by more than the few percent that separate the systems.
  int reps = 21;
};

void add_options(example::OptionParser& parser, Options& o) {
  parser.option("--trees", o.trees, "sample trees: " + uts::sample_tree_names())
      .comma_separated()
      .type_name("T1,T3")
      .check([](const std::string& name) -> std::string {
        try {
          uts::sample_tree(name);
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
        return {};
      });
  example::add_positive_list_option(parser, "--workers", o.workers, "1,2", "worker counts");
  parser
      .option("--systems", o.systems,
              "systems: sequential, versa, versa-steady (a release at every chunk), openmp, tbb")
      .comma_separated()
      .type_name("LIST");
  example::add_parsed_option(parser, "--tasks", o.search.granularity, uts::parse_granularity,
                             "a task per node, or per chunk of nodes (default)")
      .type_name("node|chunk");
  example::add_positive_option(
      parser, "--chunk", o.search.chunk_nodes, "N",
      "with --tasks chunk: nodes a task visits between two releases of half its stack");
  example::add_positive_option(parser, "--reps", o.reps, "N",
                               "repetitions per measurement (the median is reported)");
  parser.flag(
      "--quick", [&o] { o.reps = 3; }, "3 repetitions");
}

// One search of `tree` by `system` on `workers` workers: its seconds, or nothing when its figures
// differ from `expected` (said on stderr).
std::optional<double> search_once(const bench::UtsSystem& system, const uts::SampleTree& tree,
                                  int workers, const Options& o, const uts::TreeStats& expected) {
  uts::TreeStats found;
  const double seconds = system.search(tree.shape, workers, o.search, found);
  if (found == expected) return seconds;
  std::fprintf(stderr,
               "uts: %s on %s with %d workers found %llu nodes, %llu leaves, depth %d; "
               "the sequential search %llu, %llu, %d\n",
               system.name.c_str(), tree.name, workers,
               static_cast<unsigned long long>(found.nodes),
               static_cast<unsigned long long>(found.leaves), found.max_depth,
               static_cast<unsigned long long>(expected.nodes),
               static_cast<unsigned long long>(expected.leaves), expected.max_depth);
  return std::nullopt;
}

int run(const Options& o) {
  std::vector<bench::UtsSystem> parallel;
  for (auto provider : {bench::versa_uts, bench::openmp_uts, bench::tbb_uts})
    for (bench::UtsSystem& system : provider())
      if (bench::chosen(o.systems, system.name)) parallel.push_back(std::move(system));
  const bench::UtsSystem sequential = bench::sequential_uts().front();
  const std::string tasks = uts::to_string(o.search.granularity);
  // The default granularity keeps the parameter the tables use; the other is marked.
  const std::string suffix =
      o.search.granularity == uts::TaskGranularity::chunk ? "" : ",tasks=" + tasks;
  std::printf("# uts: median of %d interleaved rounds; tasks: one per %s", o.reps, tasks.c_str());
  if (o.search.granularity == uts::TaskGranularity::chunk)
    std::printf(" (a release every %d nodes; versa's only when its worker has none queued)",
                o.search.chunk_nodes);
  std::printf("\n%-6s %-13s %7s %10s %8s %9s\n", "tree", "system", "workers", "seconds", "speedup",
              "Mnodes/s");
  int status = 0;
  for (const std::string& name : o.trees) {
    const uts::SampleTree& tree = uts::sample_tree(name);
    // The sequential search's own figures must be the published ones before anything is timed.
    const uts::TreeStats expected = uts::search_sequential(tree.shape);
    if (!(expected == tree.expected)) {
      std::fprintf(stderr, "uts: the sequential search of %s differs from %s\n", tree.name,
                   tree.source);
      return 1;
    }
    // Every system and worker count once per round, rounds repeated --reps times: a burst of
    // load on a shared machine then falls on every system alike instead of on whichever ran
    // its repetitions during it.
    struct Measurement {
      const bench::UtsSystem* system;
      int workers;
      std::vector<double> seconds;
      bool wrong = false;
    };
    std::vector<Measurement> measurements{{&sequential, 1, {}}};
    for (int workers : o.workers)
      for (const bench::UtsSystem& system : parallel)
        measurements.push_back({&system, workers, {}});
    for (int rep = 0; rep < o.reps; ++rep)
      for (Measurement& m : measurements) {
        if (m.wrong) continue;
        const std::optional<double> seconds = search_once(*m.system, tree, m.workers, o, expected);
        if (!seconds) {
          if (m.system == &sequential) return 1;
          m.wrong = true;
          status = 1;
          continue;
        }
        m.seconds.push_back(*seconds);
      }
    const double base = bench::median(measurements.front().seconds);
    auto report = [&](const std::string& system, int workers, double seconds) {
      const std::string param = "tree=" + name + ",workers=" + std::to_string(workers) + suffix;
      std::printf("%-6s %-13s %7d %10.4f %8.2f %9.2f\n", name.c_str(), system.c_str(), workers,
                  seconds, base / seconds, static_cast<double>(expected.nodes) / seconds / 1e6);
      bench::print_result("uts", system, param, "seconds", seconds, "s");
      bench::print_result("uts", system, param, "speedup", base / seconds, "x");
    };
    for (const Measurement& m : measurements) {
      if (m.wrong || (m.system == &sequential && !bench::chosen(o.systems, "sequential"))) continue;
      report(m.system->name, m.workers, bench::median(m.seconds));
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return example::tool_main<Options>(
      argc, argv, "versa-bench-uts",
      "Unbalanced Tree Search: Versa against sequential C++, OpenMP tasks and oneTBB on the\n"
      "reference's sample trees.",
      add_options, run);
}
