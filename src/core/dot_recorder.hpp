// The task graph as Graphviz DOT (Config::dot_file), written when the runtime is destroyed.
//
// Each finished task leaves one record in the vector of the worker that finished it (like the
// trace): its name, kind, where it ran, optionally its span, and per access the handle's number,
// the mode and the required version. The edges are computed when the file is written, from the
// versions alone: the accesses of one run share a required version, runs occupy consecutive
// positions in the handle's registration order, so an access that requires version r waits
// for the positions before r, and directly for the run just before r: the accesses whose
// required version is the largest one below r. Nothing is recorded when the file is not asked
// for (the scheduler then holds no recorder).
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.hpp"
#include "base/task.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class DotRecorder {
 public:
  using Clock = std::chrono::steady_clock;

  // `workers` CPU workers (each with its own vector); `times`: Config::dot_times.
  DotRecorder(int workers, bool times);

  bool times() const { return times_; }
  // The names of the memory nodes (index 0, the host, unused), set before tasks run.
  void set_node_names(std::vector<std::string> names) { node_names_ = std::move(names); }
  // A handle was created: its name labels the edges (its number when it has none).
  void handle_created(std::uint64_t id, const std::string& name);
  // An access of handle `root` was renamed onto the fresh instance `instance`, which has a
  // number of its own (its edges are labelled with the root's label and "(renamed)").
  void handle_renamed(std::uint64_t instance, std::uint64_t root);

  // Records a finished task. `worker`: the CPU worker finishing it (-1: another thread);
  // `ran_on`: the CPU worker that ran it, or -1; `node`: the device node it ran on (0: none);
  // `start`/`end`: its span when `timed`.
  void record(const Task& task, int worker, int ran_on, int node, bool timed,
              Clock::time_point start, Clock::time_point end);

  // Writes the graph. Throws std::runtime_error naming the file if it cannot be written. Only
  // once every worker has stopped.
  void write(const std::string& path);
  void write(std::ostream& out);

 private:
  enum class Kind : std::uint8_t { task, flush, host_access };
  struct Node {
    const char* name;  // interned: outlives the recorder
    Kind kind;
    int ran_on;
    int node;
    std::uint32_t first_access;
    std::uint32_t access_count;
    bool timed;
    Clock::time_point start;
    Clock::time_point end;
  };
  struct Access {
    std::uint64_t handle;
    std::uint64_t required;
  };
  struct alignas(64) Records {
    std::vector<Node> nodes;
    std::vector<Access> accesses;
  };
  static void add(Records& records, const Task& task, int ran_on, int node, bool timed,
                  Clock::time_point start, Clock::time_point end);
  void write_nodes(std::ostream& out, const std::vector<const Node*>& nodes) const;
  std::string where(const Node& node) const;
  std::string handle_label(std::uint64_t id);

  const bool times_;
  const Clock::time_point origin_;
  std::vector<std::string> node_names_;
  std::vector<Records> workers_;  // each owned by its worker thread until write()
  Mutex others_mutex_;
  Records others_ VERSA_GUARDED_BY(others_mutex_);  // finished on other threads
  Mutex names_mutex_;
  std::unordered_map<std::uint64_t, std::string> handle_names_ VERSA_GUARDED_BY(names_mutex_);
};

}  // namespace versa::detail
