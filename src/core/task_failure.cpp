// Scheduler (core/scheduler.hpp): the failure rule. A task that throws is recorded in the
// failure log and spoils (poisons) the data it modifies; a task that reads spoilt data is
// cancelled instead of run, inheriting the failure, and spoils its own outputs in turn
// (docs/architecture.md, "Tasks", on failures).
#include "base/failure.hpp"
#include "core/device_dispatch.hpp"
#include "core/scheduler.hpp"

namespace versa::detail {

std::shared_ptr<const Failure> Scheduler::record_failure(const Task& task,
                                                         std::exception_ptr error) {
  auto failure = std::make_shared<Failure>();
  failure->task_name = task.name;
  failure->exception = error;
  failure->message = describe(error);
  failures_.record(failure);
  return failure;
}

// --- Procedure: fail ------------------------------------------------------------------------

std::shared_ptr<const Failure> Scheduler::inherited_failure(Task* task) {
  std::shared_ptr<const Failure> cause;
  for (std::uint32_t i = 0; i < task->access_count && !cause; ++i) {
    const AccessRecord& access = task->accesses[i];
    if (reads_contents(access.mode))
      cause = access.handle->poison_before(task->progress(i).required_version);
  }
  if (cause) failures_.cancelled_by(cause);
  return cause;
}

void Scheduler::poison_outputs(Task* task, const std::shared_ptr<const Failure>& cause) {
  if (devices_) devices_->forget_exploration(*task);
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    const AccessRecord& access = task->accesses[i];
    if (modifies(access.mode)) access.handle->poison(cause, task->progress(i).required_version);
  }
}

bool Scheduler::cancel_if_poisoned(Task& task) {
  if (task.reduction_flush) return false;  // it discards the partials itself
  std::shared_ptr<const Failure> cause = inherited_failure(&task);
  if (!cause) return false;
  poison_outputs(&task, cause);
  finish_task(&task, -1);
  return true;
}

std::shared_ptr<Failure> Scheduler::record_failure(const Task& task, std::exception_ptr error,
                                                   std::string message) {
  auto failure = std::make_shared<Failure>();
  failure->task_name = task.name;
  failure->exception = std::move(error);
  failure->message = std::move(message);
  failures_.record(failure);
  return failure;
}

void Scheduler::fail_task(Task* task, std::exception_ptr error, std::string message, int worker) {
  poison_outputs(task, record_failure(*task, std::move(error), std::move(message)));
  finish_task(task, worker);
}

}  // namespace versa::detail
