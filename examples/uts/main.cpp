// Command-line tool: search one of the Unbalanced Tree Search sample trees with Versa tasks (a
// task per node or per chunk of nodes) and report the tree's figures, the time and the speed;
// with --check, compare them with the sequential search and with the published figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "result_line.hpp"
#include "sample_trees.hpp"
#include "sequential_search.hpp"
#include "versa_search.hpp"

namespace {

struct Options {
  std::string tree = "T1";
  uts::SearchOptions search;
  int workers = 0;
  int repeat = 1;
  bool check = false;
};

void add_options(example::OptionParser& parser, Options& o) {
  example::add_parsed_option(
      parser, "--tree", o.tree,
      [](const std::string& name) { return std::string(uts::sample_tree(name).name); },
      "sample tree: " + uts::sample_tree_names() + " (default T1)")
      .type_name("NAME");
  example::add_parsed_option(parser, "--tasks", o.search.granularity, uts::parse_granularity,
                             "a task per node, or per chunk of nodes (default)")
      .type_name("node|chunk");
  example::add_positive_option(
      parser, "--chunk", o.search.chunk_nodes, "N",
      "with --tasks chunk: nodes a task visits between two releases of half its stack");
  parser.flag(
      "--steady", [&o] { o.search.on_demand = false; },
      "with --tasks chunk: release at every chunk, not only when the worker has none queued");
  example::add_workers_option(parser, o.workers);
  example::add_repeat_option(parser, o.repeat, "search R times");
  parser.flag("--check", o.check,
              "compare the figures with the sequential search and the published ones");
}

void print_stats(const char* label, const uts::TreeStats& stats) {
  std::printf("%-11s %llu nodes, %llu leaves (%.2f%%), depth %d\n", label,
              static_cast<unsigned long long>(stats.nodes),
              static_cast<unsigned long long>(stats.leaves),
              100.0 * static_cast<double>(stats.leaves) / static_cast<double>(stats.nodes),
              stats.max_depth);
}

int run(const Options& o) {
  const uts::SampleTree& tree = uts::sample_tree(o.tree);
  example::Devices cpu_only = example::parse_devices("cpu");
  versa::Runtime rt{example::runtime_config(cpu_only, o.workers, "")};
  example::announce(rt, cpu_only);
  std::vector<double> seconds;
  uts::TreeStats found;
  for (int rep = 0; rep < o.repeat; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    found = uts::search_versa(rt, tree.shape, o.search);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  std::string kind = uts::to_string(tree.shape.type);
  if (tree.shape.type != uts::TreeType::binomial)
    kind += std::string(" ") + uts::to_string(tree.shape.geometric);
  std::printf("tree        %s: %s (%s)\n", tree.name, kind.c_str(),
              uts::reference_options(tree.shape).c_str());
  std::printf("tasks       one per %s", uts::to_string(o.search.granularity));
  if (o.search.granularity == uts::TaskGranularity::chunk)
    std::printf(" (a release every %d nodes%s)", o.search.chunk_nodes,
                o.search.on_demand ? ", when the worker has none queued" : "");
  std::printf(", %d workers\n", rt.cpu_workers());
  print_stats("found", found);
  std::printf("time        %.4f s (median of %d), %.2f M nodes/s\n", median, o.repeat,
              static_cast<double>(found.nodes) / median / 1e6);
  int status = 0;
  if (o.check) {
    const uts::TreeStats sequential = uts::search_sequential(tree.shape);
    print_stats("sequential", sequential);
    print_stats("published", tree.expected);
    const bool pass = found == sequential && found == tree.expected;
    std::printf("check       %s\n", pass ? "PASS" : "FAIL");
    if (!pass) status = 1;
  }
  example::print_result("uts", "versa",
                        std::string("tree=") + tree.name +
                            ",workers=" + std::to_string(rt.cpu_workers()) +
                            ",tasks=" + uts::to_string(o.search.granularity),
                        "seconds", median, "s");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return example::tool_main<Options>(
      argc, argv, "uts",
      "Searches an Unbalanced Tree Search sample tree (SHA-1 splittable random numbers) with\n"
      "Versa tasks and reports its node, leaf and depth figures and the time taken.",
      add_options, run);
}
