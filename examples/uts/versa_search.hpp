// The tree search as a Versa task program, with spawn/sync and no data handles: a tree search
// has no data to move, only work to share. Two ways to cut it into tasks (docs/uts.md compares
// them):
//  - node: one task per node, as the reference's OpenMP version (BOTS uts) does: a node's task
//    spawns one task per child and syncs, then adds up its children's figures.
//  - chunk: a task searches its own stack of nodes depth first and, every chunk_nodes nodes it
//    visits, releases the bottom half of its stack (the shallowest nodes, whose subtrees are the
//    largest) as a new task. A release is considered at a steady rate whatever the tree's shape (a
//    geometric tree's depth-first stack stays a few dozen nodes deep; a binomial root has 2000
//    children), and each task hashes at least chunk_nodes nodes per task it creates.
//    By default (on_demand) a release happens only when the task's worker has no task queued for
//    idle workers to take (Runtime::surplus_tasks() == 0): as many tasks as the idle workers
//    take, rather than one per chunk_nodes nodes whether any worker is idle or not. On one worker
//    a search then releases a handful of chunks and runs at the sequential search's speed.
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
  int chunk_nodes = 256;  // with chunk: nodes a task visits between two releases (>= 1)
  // With chunk: release only when the worker has nothing queued for idle workers; false:
  // release every chunk_nodes nodes, as the peers in bench/uts do (they have no such query).
  bool on_demand = true;
};

// Searches the tree `shape` with tasks on `rt` and returns what it found, the same figures as
// search_sequential. Call it from the main program (not from a task): it spawns the root task and
// syncs. Throws std::invalid_argument when options.chunk_nodes < 1.
TreeStats search_versa(versa::Runtime& rt, const TreeShape& shape,
                       const SearchOptions& options = {});

}  // namespace uts
