// The search on OpenMP tasks (libgomp with g++), as the reference's OpenMP version writes it: a
// task per child with `#pragma omp task` and `#pragma omp taskwait`, or the same per chunk of
// nodes. One thread enters the `single` region with the root; the others take tasks at its
// implicit barrier. The clock runs inside the region, so starting the team is not timed.
//
// libgomp runs a new task at once, undeferred, while more than 64 tasks per thread are queued:
// a cut-off of its own, which spares it most task creations of a wide tree.
//
// Built without OpenMP support, openmp_uts() returns no system.
#include "systems.hpp"

#ifdef _OPENMP

#include <omp.h>

#include <cstddef>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../common/harness.hpp"

namespace bench {
namespace {

uts::TreeStats search_node(const uts::TreeShape& shape, const uts::Node& node) {
  const int children = uts::child_count(shape, node);
  uts::TreeStats stats;
  stats.count(node, children);
  if (children == 0) return stats;
  std::vector<uts::TreeStats> partial(static_cast<std::size_t>(children));
  uts::TreeStats* slots = partial.data();
  for (int i = 0; i < children; ++i) {
#pragma omp task default(none) firstprivate(i, slots) shared(shape, node)
    slots[i] = search_node(shape, uts::child_node(node, i));
  }
#pragma omp taskwait
  for (const uts::TreeStats& child : partial) stats += child;
  return stats;
}

struct Chunk {
  std::vector<uts::Node> nodes;
  uts::TreeStats stats;
};

void search_chunk(const uts::TreeShape& shape, std::size_t chunk_nodes, Chunk& chunk);

// As in examples/uts/versa_search.cpp: the release out of line, the loop's state in locals. The
// task it creates is a child of the calling task, so the caller's taskwait covers it.
[[gnu::noinline]] void release_bottom_half(const uts::TreeShape& shape, std::size_t chunk_nodes,
                                           std::vector<uts::Node>& stack,
                                           std::deque<Chunk>& released) {
  const auto bottom = stack.begin() + static_cast<std::ptrdiff_t>(stack.size() / 2);
  Chunk* handed_out = &released.emplace_back(Chunk{{stack.begin(), bottom}, {}});
  stack.erase(stack.begin(), bottom);
#pragma omp task default(none) firstprivate(handed_out, chunk_nodes) shared(shape)
  search_chunk(shape, chunk_nodes, *handed_out);
}

void search_chunk(const uts::TreeShape& shape, std::size_t chunk_nodes, Chunk& chunk) {
  std::vector<uts::Node> stack = std::move(chunk.nodes);
  uts::TreeStats stats;
  std::deque<Chunk> released;  // addresses stay put while their tasks run
  std::size_t until_release = chunk_nodes;
  while (!stack.empty()) {
    const uts::Node node = stack.back();
    stack.pop_back();
    const int children = uts::child_count(shape, node);
    stats.count(node, children);
    for (int i = 0; i < children; ++i) stack.push_back(uts::child_node(node, i));
    if (--until_release == 0) {
      until_release = chunk_nodes;
      if (stack.size() >= 2) release_bottom_half(shape, chunk_nodes, stack, released);
    }
  }
#pragma omp taskwait
  for (const Chunk& other : released) stats += other.stats;
  chunk.stats = stats;
}

double search(const uts::TreeShape& shape, int workers, const uts::SearchOptions& options,
              uts::TreeStats& found) {
  omp_set_dynamic(0);
  double seconds = 0;
  int team_size = 0;
  const auto chunk_nodes = static_cast<std::size_t>(options.chunk_nodes);
#pragma omp parallel num_threads(workers) default(none) \
    shared(shape, options, found, seconds, team_size, chunk_nodes)
#pragma omp single
  {
    team_size = omp_get_num_threads();
    const auto start = Clock::now();
    if (options.granularity == uts::TaskGranularity::node) {
      found = search_node(shape, uts::root_node(shape));
    } else {
      Chunk all{{uts::root_node(shape)}, {}};
      search_chunk(shape, chunk_nodes, all);
      found = all.stats;
    }
    seconds = seconds_since(start);
  }
  if (team_size != workers)
    throw std::runtime_error("openmp: asked for " + std::to_string(workers) +
                             " threads, the parallel region had " + std::to_string(team_size));
  return seconds;
}

}  // namespace

std::vector<UtsSystem> openmp_uts() { return {UtsSystem{"openmp", search}}; }

}  // namespace bench

#else

namespace bench {
std::vector<UtsSystem> openmp_uts() { return {}; }
}  // namespace bench

#endif
