// The search on oneTBB: a tbb::task_group per node (one run() per child, then wait()) or per
// chunk of nodes, inside a task_arena of `workers` threads (the calling thread is one of them).
// The arena is started before the clock and ended after it, so TBB's threads are not timed
// starting.
//
// Built without oneTBB (VERSA_BENCH_TBB undefined), tbb_uts() returns no system.
#include "systems.hpp"

#ifdef VERSA_BENCH_TBB

#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <cstddef>
#include <deque>
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
  tbb::task_group group;
  for (int i = 0; i < children; ++i)
    group.run([&shape, &node, slot = &partial[i], i] {
      *slot = search_node(shape, uts::child_node(node, i));
    });
  group.wait();
  for (const uts::TreeStats& child : partial) stats += child;
  return stats;
}

struct Chunk {
  std::vector<uts::Node> nodes;
  uts::TreeStats stats;
};

void search_chunk(const uts::TreeShape& shape, std::size_t chunk_nodes, Chunk& chunk);

// As in examples/uts/versa_search.cpp: the release out of line, the loop's state in locals.
[[gnu::noinline]] void release_bottom_half(const uts::TreeShape& shape, std::size_t chunk_nodes,
                                           std::vector<uts::Node>& stack,
                                           std::deque<Chunk>& released, tbb::task_group& group) {
  const auto bottom = stack.begin() + static_cast<std::ptrdiff_t>(stack.size() / 2);
  Chunk& handed_out = released.emplace_back(Chunk{{stack.begin(), bottom}, {}});
  stack.erase(stack.begin(), bottom);
  group.run([&shape, chunk_nodes, &handed_out] { search_chunk(shape, chunk_nodes, handed_out); });
}

void search_chunk(const uts::TreeShape& shape, std::size_t chunk_nodes, Chunk& chunk) {
  std::vector<uts::Node> stack = std::move(chunk.nodes);
  uts::TreeStats stats;
  std::deque<Chunk> released;  // addresses stay put while their tasks run
  std::size_t until_release = chunk_nodes;
  tbb::task_group group;
  while (!stack.empty()) {
    const uts::Node node = stack.back();
    stack.pop_back();
    const int children = uts::child_count(shape, node);
    stats.count(node, children);
    for (int i = 0; i < children; ++i) stack.push_back(uts::child_node(node, i));
    if (--until_release == 0) {
      until_release = chunk_nodes;
      if (stack.size() >= 2) release_bottom_half(shape, chunk_nodes, stack, released, group);
    }
  }
  group.wait();
  for (const Chunk& other : released) stats += other.stats;
  chunk.stats = stats;
}

double search(const uts::TreeShape& shape, int workers, const uts::SearchOptions& options,
              uts::TreeStats& found) {
  tbb::task_arena arena(workers);
  arena.initialize();
  double seconds = 0;
  arena.execute([&] {
    const auto start = Clock::now();
    if (options.granularity == uts::TaskGranularity::node) {
      found = search_node(shape, uts::root_node(shape));
    } else {
      Chunk all{{uts::root_node(shape)}, {}};
      search_chunk(shape, static_cast<std::size_t>(options.chunk_nodes), all);
      found = all.stats;
    }
    seconds = seconds_since(start);
  });
  return seconds;
}

}  // namespace

std::vector<UtsSystem> tbb_uts() { return {UtsSystem{"tbb", search}}; }

}  // namespace bench

#else

namespace bench {
std::vector<UtsSystem> tbb_uts() { return {}; }
}  // namespace bench

#endif
