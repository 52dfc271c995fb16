#include "core/task_tracker.hpp"

namespace versa::detail {

void TaskTracker::finished(const Task& task, int worker, int node) {
  Clock::time_point start, end;
  // Whether `worker` ran it (a task finished without running has no span: cancelled, or a flush
  // with nothing to apply).
  const bool ran = worker >= 0 && activity_.last_span(worker, &task, start, end);
  if (dot_) dot_->record(task, worker, ran ? worker : -1, node, ran && timed(), start, end);
  if (task.access_count != 0) live_.remove(&task);
  activity_.finished(worker);
}

void TaskTracker::host_access_ended(const Task& ticket) {
  live_.remove(&ticket);
  if (!tracking_) return;
  if (dot_) dot_->record(ticket, -1, -1, 0, false, Clock::time_point(), Clock::time_point());
  activity_.finished(-1);
}

}  // namespace versa::detail
