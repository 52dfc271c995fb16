// The text of Runtime::describe_pending and of the stall report: each handle that has tasks
// parked at it (or a host view open), its version, the version each parked task needs, and
// who holds it: the unfinished accesses allowed to run on it (required version at most the
// handle's version), each with what it is doing (running on a CPU worker, ready in a queue, on
// a device, parked at another handle, a host view from acquire()). Then, from each handle's
// first waiter, the chain of who waits for whom down to the holder that is not waiting itself.
//
// Holders need the registry of tasks (tracking on); without it the report lists the handles,
// versions, waiters and host views, and says that holders need Config::track_tasks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/task_tracker.hpp"
#include "data/handle_registry.hpp"

namespace versa::detail {

class StallReport {
 public:
  // `node_names`: the memory nodes' names (index 0, the host, unused).
  StallReport(HandleRegistry& handles, TaskTracker& tracker, std::vector<std::string> node_names)
      : handles_(handles), tracker_(tracker), node_names_(std::move(node_names)) {}

  // The report, under `header` (a line saying why it is written). `pending`: the scheduler's
  // count of unfinished tasks. Any thread; the runtime's state is read at about one instant.
  std::string describe(const std::string& header, std::int64_t pending);

 private:
  HandleRegistry& handles_;
  TaskTracker& tracker_;
  const std::vector<std::string> node_names_;
};

}  // namespace versa::detail
