// The micro-benchmark patterns on oneTBB.
//
// Threads: each pattern runs inside a tbb::task_arena with `workers` slots, entered from the
// calling thread with arena.execute(). One slot is reserved for that thread, so workers - 1 TBB
// worker threads join it; a tbb::global_control caps the whole process at `workers` threads as
// well, so exactly `workers` threads execute tasks.
//
// Submission: independent tasks (spawn, independent) go to a tbb::task_group. Patterns with data
// dependencies (cholesky_dag, dependencies, task_count, generations) become a tbb::flow::graph of
// continue_nodes with explicit edges, which the benchmark derives from the tasks' data accesses the
// way a user would: per data item it tracks the last writer and the readers since that writer; a
// reader follows the last writer, a writer follows the last writer and all those readers.
//
// Timing: the clock starts inside arena.execute(), before the first task is created, and stops
// when all tasks have finished. For graphs that covers creating the graph, its nodes and edges
// (the dependency discovery that the other systems do at submission time) and running it. A flow
// graph only runs once it is complete: an edge added from a node that has already run would never
// deliver its message, so roots can only be started after the last edge. Creating and warming up
// the arena, and destroying the graph afterwards, are not timed.
//
// Built without oneTBB (not found, or VERSA_BENCH_PEERS off), tbb_systems() returns no system.
#include "systems.hpp"

#if VERSA_BENCH_TBB

#include <malloc.h>
#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <cstddef>
#include <deque>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../common/harness.hpp"

namespace bench {
namespace {

// Size of the data pool of the `dependencies` pattern (see systems.hpp).
constexpr long kPoolSize = 1024;

// Runs `pattern` (which returns its own timing) in an arena where exactly `workers` threads
// execute tasks, after a warm-up that makes sure the worker threads exist and have joined once.
template <class Pattern>
auto run_in_arena(int workers, Pattern&& pattern) {
  if (workers < 1) throw std::invalid_argument("tbb: workers must be at least 1");
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            static_cast<std::size_t>(workers));
  tbb::task_arena arena(workers);
  arena.initialize();
  arena.execute([workers] {
    tbb::task_group warm_up;
    for (int i = 0; i < 4 * workers; ++i) warm_up.run([] { busy_wait_us(50); });
    warm_up.wait();
  });
  return arena.execute(std::forward<Pattern>(pattern));
}

using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;

// A flow graph under construction, with the per-item bookkeeping that turns data accesses into
// edges. Nodes live in a deque so that they never move once created.
class DependencyGraph {
 public:
  explicit DependencyGraph(long items) : items_(static_cast<std::size_t>(items)) {}

  // One data access of a task: item index, and whether the task writes it.
  struct Access {
    long item;
    bool write;
  };

  // Adds a task running `body` that accesses the given items, with the edges they imply.
  template <class Body>
  Node& add(Body body, std::initializer_list<Access> accesses) {
    return add_node(std::move(body), accesses.begin(), accesses.end());
  }

  template <class Body, class Iterator>
  Node& add_node(Body body, Iterator first, Iterator last) {
    Node& node = nodes_.emplace_back(graph_, [body](const tbb::flow::continue_msg&) { body(); });
    predecessors_.clear();
    for (Iterator it = first; it != last; ++it) {
      const Item& item = items_[static_cast<std::size_t>(it->item)];
      if (item.last_writer) predecessors_.push_back(item.last_writer);
      if (it->write) {
        predecessors_.insert(predecessors_.end(), item.readers.begin(), item.readers.end());
      }
    }
    // Only after every predecessor is known, so that a task never becomes its own predecessor.
    for (Iterator it = first; it != last; ++it) {
      Item& item = items_[static_cast<std::size_t>(it->item)];
      if (it->write) {
        item.last_writer = &node;
        item.readers.clear();
      } else {
        item.readers.push_back(&node);
      }
    }
    // Two accesses can lead to the same predecessor; a continue_node would count both edges.
    std::sort(predecessors_.begin(), predecessors_.end());
    predecessors_.erase(std::unique(predecessors_.begin(), predecessors_.end()),
                        predecessors_.end());
    for (Node* predecessor : predecessors_) tbb::flow::make_edge(*predecessor, node);
    if (predecessors_.empty()) roots_.push_back(&node);
    return node;
  }

  // Starts every node without predecessors and waits for the whole graph.
  void run() {
    for (Node* root : roots_) root->try_put(tbb::flow::continue_msg());
    graph_.wait_for_all();
  }

 private:
  struct Item {
    Node* last_writer = nullptr;
    std::vector<Node*> readers;  // since last_writer
  };

  // Declared first so that it outlives the nodes.
  tbb::flow::graph graph_;
  std::deque<Node> nodes_;
  std::vector<Item> items_;
  std::vector<Node*> roots_;
  std::vector<Node*> predecessors_;  // scratch for add_node
};

double spawn(int workers, long tasks) {
  return run_in_arena(workers, [tasks] {
    const auto start = Clock::now();
    tbb::task_group group;
    for (long i = 0; i < tasks; ++i) group.run([] {});
    group.wait();
    return seconds_since(start);
  });
}

double independent(int workers, long tasks, double task_us) {
  return run_in_arena(workers, [tasks, task_us] {
    const auto start = Clock::now();
    tbb::task_group group;
    for (long i = 0; i < tasks; ++i) group.run([task_us] { busy_wait_us(task_us); });
    group.wait();
    return seconds_since(start);
  });
}

double cholesky_dag(int workers, int tiles, double task_us) {
  return run_in_arena(workers, [tiles, task_us] {
    const auto start = Clock::now();
    double seconds = 0;
    {
      const long t = tiles;
      DependencyGraph graph(t * t);
      const auto tile = [t](long m, long n) { return m * t + n; };
      const auto work = [task_us] { busy_wait_us(task_us); };
      for (long k = 0; k < t; ++k) {
        graph.add(work, {{tile(k, k), true}});  // potrf(k)
        for (long m = k + 1; m < t; ++m) {
          graph.add(work, {{tile(k, k), false}, {tile(m, k), true}});  // trsm(m, k)
        }
        for (long m = k + 1; m < t; ++m) {
          graph.add(work, {{tile(m, k), false}, {tile(m, m), true}});  // syrk(m, k)
          for (long j = k + 1; j < m; ++j) {
            graph.add(work,
                      {{tile(m, k), false}, {tile(j, k), false}, {tile(m, j), true}});  // gemm
          }
        }
      }
      graph.run();
      seconds = seconds_since(start);
    }  // the graph's destruction is not timed
    return seconds;
  });
}

// Reads never conflict, so these tasks get no edges at all and run as independent graph roots;
// they still go through the same access tracking as the other graphs, which is the submission
// work a flow-graph user needs to find that out. handles == 0 skips the tracking (the baseline).
double dependencies(int workers, long tasks, int handles) {
  if (handles < 0 || handles > kPoolSize) {
    throw std::invalid_argument("tbb: handles must be within [0, pool size]");
  }
  return run_in_arena(workers, [tasks, handles] {
    const auto start = Clock::now();
    double seconds = 0;
    {
      DependencyGraph graph(kPoolSize);
      std::vector<DependencyGraph::Access> reads(static_cast<std::size_t>(handles));
      const auto empty = [] {};
      for (long i = 0; i < tasks; ++i) {
        for (long j = 0; j < handles; ++j) {
          reads[static_cast<std::size_t>(j)] = {(i * handles + j) % kPoolSize, false};
        }
        graph.add_node(empty, reads.begin(), reads.end());
      }
      graph.run();
      seconds = seconds_since(start);
    }
    return seconds;
  });
}

// The gate is a node with an empty body that precedes every task node; the whole graph is built
// before the gate receives its message, so every task is pending (a node waiting for its one
// predecessor) until then. TBB allocates the tasks that run the nodes only when they become
// ready, so the pending state it holds per task is the node, its body and the gate's successor
// entry, all of which the heap measurement sees.
TaskCountResult task_count(int workers, long tasks) {
  return run_in_arena(workers, [tasks] {
    TaskCountResult result;
    const auto start = Clock::now();
    {
      tbb::flow::graph graph;
      std::deque<Node> nodes;
      const double heap_before = heap_in_use();
      Node gate(graph, [](const tbb::flow::continue_msg&) {});
      for (long i = 0; i < tasks; ++i) {
        Node& node =
            nodes.emplace_back(graph, [](const tbb::flow::continue_msg&) { busy_wait_us(1.0); });
        tbb::flow::make_edge(gate, node);
      }
      // The heap probe itself is not part of the measured time.
      const auto probe_start = Clock::now();
      const double heap_pending = heap_in_use();
      const double probe_seconds = seconds_since(probe_start);
      gate.try_put(tbb::flow::continue_msg());
      graph.wait_for_all();
      result.seconds = seconds_since(start) - probe_seconds;
      if (tasks > 0)
        result.bytes_per_pending_task = (heap_pending - heap_before) / static_cast<double>(tasks);
    }
    return result;
  });
}

// A graph per round, built and run (the graph of a round is destroyed after the clock stops).
double generations(int workers, long n, long rounds) {
  return run_in_arena(workers, [n, rounds] {
    std::vector<std::unique_ptr<DependencyGraph>> graphs;
    graphs.reserve(static_cast<std::size_t>(rounds));
    const auto start = Clock::now();
    for (long round = 0; round < rounds; ++round) {
      DependencyGraph& graph = *graphs.emplace_back(std::make_unique<DependencyGraph>(1));
      const auto empty = [] {};
      graph.add(empty, {{0, true}});
      for (long i = 0; i < n; ++i) graph.add(empty, {{0, false}});
      for (long i = 0; i < n; ++i) graph.add(empty, {{0, true}});
      graph.run();
    }
    return seconds_since(start);
  });
}

}  // namespace

std::vector<System> tbb_systems() {
  System system;
  system.name = "tbb";
  system.spawn = spawn;
  system.independent = independent;
  system.cholesky_dag = cholesky_dag;
  system.dependencies = dependencies;
  system.task_count = task_count;
  system.generations = generations;
  return {system};
}

}  // namespace bench

#else  // no oneTBB

namespace bench {
std::vector<System> tbb_systems() { return {}; }
}  // namespace bench

#endif
