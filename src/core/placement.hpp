// Which memory node a ready task runs on (DESIGN section 3): the task type's placement rule
// narrows the candidates to the devices it has implementations for; `automatic` then sends it
// where it is expected to finish first, counting the device's queued work, the time to copy the
// bytes not yet valid there and the execution time from the performance model. Combinations the
// model has not calibrated are explored first.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/perf_model.hpp"

namespace versa::detail {

class DeviceWorker;
class Task;

class PlacementPolicy {
 public:
  struct Node {
    DeviceKind kind = DeviceKind::cpu;
    Device* device = nullptr;        // null for the host
    DeviceWorker* worker = nullptr;  // null for the host
  };

  PlacementPolicy(std::vector<Node> nodes, int cpu_workers, PerfModel& model);

  // Whether `task` may run on `node` (it has an implementation there and its rule allows it).
  bool can_run(const Task& task, int node) const;
  // Whether any present node can run a task with these implementations and rule.
  bool runnable_anywhere(const Task& task) const;
  // The device kinds present, for messages: "cpu, emulated".
  std::string present_kinds() const;

  // Chooses the node for a ready task; sets its expected_ns and explored fields.
  int choose(Task& task);

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
  double transfer_seconds(const Task& task, int node) const;
  double backlog_seconds(int node) const;
  double queued_tasks_per_worker(int node) const;

  std::vector<Node> nodes_;
  const int cpu_workers_;
  PerfModel& model_;
  std::atomic<std::int64_t> cpu_backlog_ns_{0};
  std::atomic<std::int64_t> cpu_tasks_{0};
};

}  // namespace versa::detail
