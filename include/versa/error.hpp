#pragma once

#include <exception>
#include <stdexcept>
#include <string>

namespace versa {

// Thrown by Runtime::wait_all (and by a host acquire of data a failed task should have
// produced) when a task threw. what() reads "task '<name>' failed: <original message>"; the
// tasks that depended on the failed task's output were cancelled, not run.
class TaskFailure : public std::runtime_error {
 public:
  TaskFailure(std::string task_name, std::exception_ptr original, const std::string& message,
              std::size_t cancelled_tasks)
      : std::runtime_error("task '" + task_name + "' failed: " + message),
        task_name_(std::move(task_name)),
        original_(std::move(original)),
        cancelled_tasks_(cancelled_tasks) {}

  // Name of the task that threw.
  const std::string& task_name() const { return task_name_; }
  // The exception the task threw (rethrow it with std::rethrow_exception to inspect it).
  const std::exception_ptr& original() const { return original_; }
  // How many dependent tasks were cancelled up to the time of the report.
  std::size_t cancelled_tasks() const { return cancelled_tasks_; }

 private:
  std::string task_name_;
  std::exception_ptr original_;
  std::size_t cancelled_tasks_;
};

}  // namespace versa
