// The Unbalanced Tree Search on each system: sequential C++, Versa (examples/uts), OpenMP tasks
// and oneTBB task_group, one file per system, all driven by main.cpp in the same process.
//
// Every parallel system cuts the search into tasks the same two ways (SearchOptions): a task per
// node, which spawns a task per child and waits for them (the reference's OpenMP version, BOTS
// uts), or a task per chunk of nodes: half of a task's own depth-first stack, released every
// chunk_nodes nodes it visits (examples/uts/versa_search.hpp). Each is written with its system's
// own primitives; the tree and its hashing are the same code for all (examples/uts/tree.hpp).
// With chunks, "versa" releases one only when its worker has no task queued for idle workers
// (Runtime::surplus_tasks), which neither OpenMP nor oneTBB can ask; "versa-steady" releases at
// every chunk, as they do.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sample_trees.hpp"
#include "versa_search.hpp"

namespace bench {

struct UtsSystem {
  std::string name;  // "sequential", "versa", "versa-steady", "openmp", "tbb"
  // Searches `shape` with `workers` threads and returns the seconds the search took, its figures
  // in `found`. Starting and stopping the system's threads is not timed.
  std::function<double(const uts::TreeShape& shape, int workers, const uts::SearchOptions& options,
                       uts::TreeStats& found)>
      search;
};

// Each returns the systems it provides (empty when the library is not available).
std::vector<UtsSystem> sequential_uts();
std::vector<UtsSystem> versa_uts();
std::vector<UtsSystem> openmp_uts();
std::vector<UtsSystem> tbb_uts();

}  // namespace bench
