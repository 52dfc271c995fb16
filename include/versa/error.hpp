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

  // Name of the task that threw (for a CopyFailure, the operation the copy was for).
  const std::string& task_name() const { return task_name_; }
  // The exception the task threw (rethrow it with std::rethrow_exception to inspect it).
  const std::exception_ptr& original() const { return original_; }
  // How many dependent tasks were cancelled up to the time of the report.
  std::size_t cancelled_tasks() const { return cancelled_tasks_; }

 protected:
  // A failure whose what() is `what` as given.
  struct Worded {};
  TaskFailure(Worded, const std::string& what, std::string task_name, std::exception_ptr original)
      : std::runtime_error(what),
        task_name_(std::move(task_name)),
        original_(std::move(original)),
        cancelled_tasks_(0) {}

 private:
  std::string task_name_;
  std::exception_ptr original_;
  std::size_t cancelled_tasks_;
};

// Thrown by Runtime::wait_all (bringing device data home) and Runtime::acquire (the copy the
// view needed) when a copy of a handle's data between host and device memory failed. what()
// reads "<operation>: copy of handle '<name>' (<size>) from <device> failed: <cause>";
// task_name() is the operation ("wait_all", "acquire"). Nothing is lost: the host memory keeps
// the last version that reached it, the device keeps its valid copy, and a later wait_all or
// acquire tries the copy again.
class CopyFailure : public TaskFailure {
 public:
  CopyFailure(std::string operation, std::string handle_name, std::string device,
              const std::string& message)
      : TaskFailure(Worded{}, operation + ": " + message, operation,
                    std::make_exception_ptr(std::runtime_error(message))),
        handle_name_(std::move(handle_name)),
        device_(std::move(device)) {}

  // The handle whose copy failed ("" when it has no name).
  const std::string& handle_name() const { return handle_name_; }
  // The device at the other end of the copy ("emulated:0", "cuda:1 (...)").
  const std::string& device() const { return device_; }

 private:
  std::string handle_name_;
  std::string device_;
};

}  // namespace versa
