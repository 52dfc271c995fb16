#include "versa_search.hpp"

#include <cstddef>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace uts {
namespace {

struct Search {
  versa::Runtime& rt;
  const TreeShape& shape;
  std::size_t chunk_nodes;
  bool on_demand;
};

// --- One task per node ---------------------------------------------------------------------------

// Each child's task computes the child from its parent, which stays alive on the parent's stack
// until its sync: the closure is then four words, which fit in the task's inline storage.
TreeStats search_node(const Search& search, const Node& node) {
  const int children = child_count(search.shape, node);
  TreeStats stats;
  stats.count(node, children);
  if (children == 0) return stats;
  std::vector<TreeStats> partial(static_cast<std::size_t>(children));
  for (int i = 0; i < children; ++i) {
    search.rt.spawn("uts node", [&search, &node, slot = &partial[i], i] {
      *slot = search_node(search, child_node(node, i));
    });
  }
  search.rt.sync();
  for (const TreeStats& child : partial) stats += child;
  return stats;
}

// --- One task per chunk of nodes -----------------------------------------------------------------

// A released part of a stack: its nodes in, its figures out. Chunks live in a deque of the
// releasing task, whose addresses stay put while their tasks run.
struct Chunk {
  std::vector<Node> nodes;
  TreeStats stats;
};

void search_chunk(const Search& search, Chunk& chunk);

// Hands the bottom half of `stack` (the shallowest nodes, whose subtrees are the largest) to a new
// task. Out of line, as in every peer's search: inlined, the release's calls made the compiler
// keep the hot loop's state in memory, and on one worker the loop ran 6-8% slower than the
// sequential search even when it released nothing.
[[gnu::noinline]] void release_bottom_half(const Search& search, std::vector<Node>& stack,
                                           std::deque<Chunk>& released) {
  const auto bottom = stack.begin() + static_cast<std::ptrdiff_t>(stack.size() / 2);
  Chunk& handed_out = released.emplace_back(Chunk{{stack.begin(), bottom}, {}});
  stack.erase(stack.begin(), bottom);
  search.rt.spawn("uts chunk", [&search, &handed_out] { search_chunk(search, handed_out); });
}

// The stack and the figures are locals, and a countdown times the releases: the loop is the
// sequential search's but for one decrement and one branch per node.
void search_chunk(const Search& search, Chunk& chunk) {
  std::vector<Node> stack = std::move(chunk.nodes);
  TreeStats stats;
  std::deque<Chunk> released;
  std::size_t until_release = search.chunk_nodes;
  while (!stack.empty()) {
    const Node node = stack.back();
    stack.pop_back();
    const int children = child_count(search.shape, node);
    stats.count(node, children);
    for (int i = 0; i < children; ++i) stack.push_back(child_node(node, i));
    if (--until_release == 0) {
      until_release = search.chunk_nodes;
      if (stack.size() >= 2 && (!search.on_demand || search.rt.surplus_tasks() == 0))
        release_bottom_half(search, stack, released);
    }
  }
  search.rt.sync();
  for (const Chunk& other : released) stats += other.stats;
  chunk.stats = stats;
}

}  // namespace

const char* to_string(TaskGranularity granularity) {
  return granularity == TaskGranularity::node ? "node" : "chunk";
}

TaskGranularity parse_granularity(const std::string& text) {
  if (text == "node") return TaskGranularity::node;
  if (text == "chunk") return TaskGranularity::chunk;
  throw std::invalid_argument("unknown task granularity '" + text + "' (expected node or chunk)");
}

TreeStats search_versa(versa::Runtime& rt, const TreeShape& shape, const SearchOptions& options) {
  if (options.chunk_nodes < 1)
    throw std::invalid_argument("chunk_nodes must be at least 1, not " +
                                std::to_string(options.chunk_nodes));
  const Search search{rt, shape, static_cast<std::size_t>(options.chunk_nodes), options.on_demand};
  TreeStats stats;
  rt.spawn("uts root", [&] {
    const Node root = root_node(shape);
    if (options.granularity == TaskGranularity::node) {
      stats = search_node(search, root);
    } else {
      Chunk all{{root}, {}};
      search_chunk(search, all);
      stats = all.stats;
    }
  });
  rt.sync();
  return stats;
}

}  // namespace uts
