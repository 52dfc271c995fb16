// The tree search as a Versa task program, with spawn/sync and no data handles: a tree search
// has no data to move, only work to share. Two ways to cut it into tasks (docs/uts.md compares
// them):
//  - node: one task per node, as the reference's OpenMP version (BOTS uts) does: a node's task
//    spawns one task per child and syncs, then adds up its children's figures.
//  - chunk: a task searches its own stack of nodes depth first and, whenever the stack holds
//    2 x chunk_nodes nodes, releases the chunk_nodes at its bottom (the shallowest, whose subtrees
//    are the largest) as a new task: the release policy of the reference's work-stealing
//    version, here with the runtime doing the stealing. Tasks are created only where there is
//    surplus work, and each does at least chunk_nodes hashes.
#pragma once

#include "tree.hpp"
#include "versa/versa.hpp"

namespace uts {

enum class TaskGranularity { node, chunk };

// "node" or "chunk"; parse_granularity throws std::invalid_argument naming the bad value.
const char* to_string(TaskGranularity granularity);
TaskGranularity parse_granularity(const std::string& text);

struct SearchOptions {
  TaskGranularity granularity = TaskGranularity::chunk;
  int chunk_nodes = 32;  // with chunk: nodes per released task (>= 1)
};

// Searches the tree `shape` with tasks on `rt` and returns what it found, the same figures as
// search_sequential. Call it from the main program (not from a task): it spawns the root task and
// syncs. Throws std::invalid_argument when options.chunk_nodes < 1.
TreeStats search_versa(versa::Runtime& rt, const TreeShape& shape,
                       const SearchOptions& options = {});

}  // namespace uts
