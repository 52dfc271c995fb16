// What the scheduler tells the diagnostics about tasks: the registry of pending tasks
// (LiveTasks), what each worker runs (WorkerActivity) and the DOT file's records (DotRecorder).
//
// The scheduler calls the per-task hooks through a pointer that is null unless tracking is on
// (Config::track_tasks, implied by the stall report and the DOT file), so that with both off a
// task pays one predictable branch per hook and nothing else: no lock, no shared line, no
// allocation. Host accesses (Runtime::acquire) are always registered: they are rare, and a
// forgotten host view is the stall the report must always be able to name.
#pragma once

#include <chrono>

#include "base/task.hpp"
#include "core/dot_recorder.hpp"
#include "core/live_tasks.hpp"
#include "core/worker_activity.hpp"

namespace versa::detail {

class TaskTracker {
 public:
  using Clock = std::chrono::steady_clock;

  // `workers` CPU workers; `tracking`: keep every task with accesses; `dot`: the DOT file's
  // recorder (null when there is none; tracking must be on with one).
  TaskTracker(int workers, bool tracking, DotRecorder* dot)
      : tracking_(tracking || dot), dot_(dot), activity_(workers) {}
  TaskTracker(const TaskTracker&) = delete;
  TaskTracker& operator=(const TaskTracker&) = delete;

  bool tracking() const { return tracking_; }

  // --- while tracking: `task` is registered (its accesses too) and not yet schedulable ---
  void submitted(const Task& task) {
    if (task.access_count != 0) live_.add(&task);
  }
  // `worker` starts or stops running `task` (its body, or the flush it applies).
  void started(const Task& task, int worker) {
    activity_.started(worker, &task, timed() ? Clock::now() : Clock::time_point());
  }
  void stopped(int worker) {
    activity_.stopped(worker, timed() ? Clock::now() : Clock::time_point());
  }
  // `task` finishes on `worker` (-1: another thread), after it ran on device `node` (0: not on
  // a device). Before its accesses finish and the record is destroyed.
  void finished(const Task& task, int worker, int node);
  // `task` was handed to device `node`; `launched`: its data is there and it runs next.
  void placed(const Task& task, int node, bool launched) { live_.placed(&task, node, launched); }

  // An access of the handle numbered `root` was renamed onto a fresh instance, `instance`.
  void handle_renamed(std::uint64_t instance, std::uint64_t root) {
    if (dot_) dot_->handle_renamed(instance, root);
  }

  // --- always: the ticket of a host access, registered, before it waits; and at its end ---
  void host_access_submitted(const Task& ticket) { live_.add(&ticket); }
  void host_access_ended(const Task& ticket);

  LiveTasks& live() { return live_; }
  WorkerActivity& activity() { return activity_; }

 private:
  bool timed() const { return dot_ && dot_->times(); }

  const bool tracking_;
  DotRecorder* const dot_;
  LiveTasks live_;
  WorkerActivity activity_;
};

}  // namespace versa::detail
