// Which memory node a ready task runs on (DESIGN section 3): the task type's placement rule
// narrows the candidates to the devices it has implementations for; `automatic` then sends it
// where it is expected to finish first, counting the device's queued work, the time to copy the
// bytes not yet valid there and the execution time from the performance model. Combinations the
// model has not calibrated are explored first: three runs each, or for the CPU workers one when
// it shows them a hundred times slower than a device (PerfModel::settle_if_far_slower); the
// type's other tasks wait in the pool meanwhile (provisional_seconds).
//
// Deciding every placement the moment a task is ready makes "wrong-way" choices when many tasks
// are ready at once: a task 8x faster on the GPU goes to a CPU because the GPU's queue is long
// at that instant, and the next task, which the CPU runs as well as the GPU, then has to wait.
// So calibrated automatic tasks with a choice are not pushed but pooled, grouped by task type
// and size, and devices pull from the pool when they have room (after heteroprio, Agullo et al.
// 2016): each takes the most urgent group (by its top task's priority) of those it may take, and
// of equally urgent ones the group it is relatively best at (lowest ratio of its time to the best
// other device's). It may take a group where it is fastest, or where it would finish the task no
// later than the fastest could, counting the work that runs there first (that of the same or a
// higher priority). A device whose slots for tasks waiting for copies are all taken pulls only
// tasks whose data it holds. The CPU workers leave to the devices the tasks that change data only
// a device holds, unless they are faster at them beyond the noise of the runs: by time alone they
// would take them, and the data would cross the host link home and back.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.hpp"
#include "base/task.hpp"
#include "base/thread_annotations.hpp"
#include "core/peer_links.hpp"
#include "core/perf_model.hpp"
#include "device/device.hpp"

namespace versa::detail {

class DeviceWorker;
class Task;

class PlacementPolicy {
 public:
  struct Node {
    DeviceKind kind = DeviceKind::cpu;
    ImplementationSlot slot = ImplementationSlot::cpu;  // what runs there
    std::string kind_name = "cpu";
    Device* device = nullptr;        // null for the host
    DeviceWorker* worker = nullptr;  // null for the host
  };

  PlacementPolicy(std::vector<Node> nodes, int cpu_workers, PerfModel& model);

  // Whether `task` may run on `node` (it has an implementation there and its rule allows it).
  bool can_run(const Task& task, int node) const;
  // The device kinds present, for messages: "cpu, emulated".
  std::string present_kinds() const;

  // Chooses the node for a ready task and sets its expected_ns and explored fields; or pools
  // it and returns `pooled`, and the runtime lets the devices know there is work to pull.
  static constexpr int pooled = -1;
  int choose(Task& task);

  // A pooled task for `node` (its expected_ns set), or null when none suits it now. With
  // `resident_only`, only a task whose data is all there (DataMover::resident): a device whose
  // copy slots are all taken still computes.
  Task* pull(int node, bool resident_only = false);
  // Whether pull(node) would return a task now. A CPU worker asks before it sleeps: a task
  // pooled after its last pull, by a thread that saw no sleeper yet, would otherwise wait in
  // the pool with every worker asleep.
  bool would_pull(int node);
  // Whether tasks are waiting in the pool (a hint).
  bool has_pooled() const { return pooled_count_.load(std::memory_order_relaxed) > 0; }

  // Queued work of the CPU workers, kept by the runtime: added when a task is placed on the
  // host, removed when it has run.
  void cpu_queued(std::int64_t ns) {
    cpu_backlog_ns_.fetch_add(ns, std::memory_order_relaxed);
    cpu_tasks_.fetch_add(1, std::memory_order_relaxed);
  }
  void cpu_done(std::int64_t ns) {
    cpu_backlog_ns_.fetch_sub(ns, std::memory_order_relaxed);
    cpu_tasks_.fetch_sub(1, std::memory_order_relaxed);
  }

  // Data bytes of a task's accesses (the model's size key).
  static std::size_t data_bytes(const Task& task);

 private:
  // The modelled time to bring `task`'s inputs to `node`. With `host_data_only` (node 0), none
  // where the task writes or commutes on data whose host replica is stale (only devices hold
  // it): a CPU worker leaves such a task to the devices. One lock of each replica set.
  std::optional<double> transfer_seconds(const Task& task, int node,
                                         bool host_data_only = false) const;
  // The node where `task` runs to calibrate the model of its type there (task.explored set), or
  // -1 when it needs no exploration or none more can start now.
  int explore(Task& task, bool devices_only);
  // Whether the CPU workers' runs of `task`'s type so far are far slower than a device's: the
  // model then needs no more of them (PerfModel::settle_if_far_slower).
  bool cpu_far_slower(const Task& task);
  // CPU workers, or the kernels a device runs at once: queued work is shared among them.
  int lanes(int node) const;
  double backlog_seconds(int node) const;
  double queued_tasks_per_lane(int node) const;

  // Pooled tasks of one task type and size: they share their expected times per node.
  struct Group {
    const char* type_name;
    std::size_t bytes;
    std::vector<double> seconds;  // per node; infinity where the tasks cannot run
    // Whether the CPU workers are faster than every device beyond the noise of the runs (their
    // transfer plus the third quartile of their runs below each device's with the first): only
    // then are they the group's fastest node, and take tasks whose data only a device holds.
    bool cpu_surely_faster;
    // Whether its type is still being explored: `seconds` are the runs so far, looked up again
    // at each pull (provisional_seconds).
    bool provisional;
    // A heap: highest priority first (the critical path), then submission order.
    std::vector<std::pair<Task*, std::uint64_t>> tasks;
  };
  void add_to_pool(Task& task, std::vector<double> seconds, bool cpu_surely_faster,
                   std::size_t bytes, bool provisional);
  static constexpr double never = std::numeric_limits<double>::infinity();
  // A device's time for a task type none of its runs has measured yet: next to nothing, so
  // that the device takes the type's pooled tasks first.
  static constexpr double unmeasured_device_seconds = 1e-9;
  // Each node's time for `task`'s type and `bytes` from the model's runs so far (never where it
  // cannot run, and for the CPU workers before their first run).
  void provisional_seconds(const Task& task, std::size_t bytes, std::vector<double>& seconds);
  struct Choice {
    // Any of the group's tasks will do: pull() picks the nearest, would_pull() need not.
    static constexpr std::size_t any_task = std::numeric_limits<std::size_t>::max();
    Group* group = nullptr;
    std::size_t task = any_task;  // where in group->tasks, where only some will do
  };
  // The node that runs the group's tasks fastest, and the priority of its most urgent task.
  static int fastest(const Group& g);
  static int urgency(const Group& g);
  // Fills the projected loads below from the backlogs and the pool.
  void project_loads() VERSA_REQUIRES(pool_mutex_);
  // `node`'s projected load ahead of a task of `priority` (one a pooled group's most urgent task
  // has): its backlog and the pooled work of that priority or higher it is fastest at.
  double load_ahead_of(int node, int priority) const VERSA_REQUIRES(pool_mutex_);
  // The group whose task `node` should take now, and which of its tasks; or no group. With
  // `resident_only`, only a task whose data is all on `node`.
  Choice group_for(int node, bool resident_only = false) VERSA_REQUIRES(pool_mutex_);
  // Where in `g.tasks` the task that `node` would take is (g.tasks.size() if none): among the
  // most urgent, and where `host_data_only`, among those that change no data only a device
  // holds.
  std::size_t nearest_task(const Group& g, int node, bool host_data_only) const
      VERSA_REQUIRES(pool_mutex_);
  // How many pooled tasks one pull with `resident_only` looks over at most, as a device looks
  // over its own queue (DeviceWorker::looked_over_at_most).
  static constexpr std::size_t looked_over_at_most = 256;
  std::size_t resident_task(const Group& g, int node, std::size_t& looked_over) const
      VERSA_REQUIRES(pool_mutex_);

  std::vector<Node> nodes_;
  const PeerLinks links_;
  const int cpu_workers_;
  PerfModel& model_;
  std::atomic<std::int64_t> cpu_backlog_ns_{0};
  std::atomic<std::int64_t> cpu_tasks_{0};

  Mutex pool_mutex_;
  std::vector<Group> pool_ VERSA_GUARDED_BY(pool_mutex_);
  std::atomic<int> pooled_count_{0};
  std::uint64_t pooled_total_ VERSA_GUARDED_BY(pool_mutex_) = 0;  // submission order in the pool
  // group_for's projected loads, kept so that no call allocates under the lock once they have
  // grown: the pooled work per group (at its most urgent task's priority, on its fastest node),
  // the running load per node, and per priority present (highest first) every node's load.
  struct PooledWork {
    int priority;
    int node;
    double seconds;
  };
  std::vector<PooledWork> pooled_work_ VERSA_GUARDED_BY(pool_mutex_);
  struct Candidate {
    Group* group;
    int priority;     // of its most urgent task
    double affinity;  // the node's time over the best other node's
  };
  std::vector<Candidate> candidates_ VERSA_GUARDED_BY(pool_mutex_);
  std::vector<double> projected_ VERSA_GUARDED_BY(pool_mutex_);
  std::vector<int> level_priorities_ VERSA_GUARDED_BY(pool_mutex_);
  std::vector<double> level_loads_ VERSA_GUARDED_BY(pool_mutex_);
  // Per node, pooled_total_ when its last pull for tasks on its data found none: up to 256
  // tasks' replicas looked at, which a device whose copy slots stay taken would otherwise repeat
  // at every step.
  std::vector<std::uint64_t> resident_miss_ VERSA_GUARDED_BY(pool_mutex_);
};

}  // namespace versa::detail
