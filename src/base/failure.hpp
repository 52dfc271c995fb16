#pragma once

#include <atomic>
#include <exception>
#include <string>

namespace versa::detail {

// The message of an exception a task threw: what() for std::exception, else a placeholder.
inline std::string describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

// Why a task did not produce its outputs: the task that threw and what it threw. Shared by the
// handles it poisoned and by the tasks cancelled because of it.
struct Failure {
  std::string task_name;
  std::exception_ptr exception;
  std::string message;
  // Set once wait_all has reported this failure. A task cancelled because of it afterwards
  // clears the flag and re-queues the failure, so that the next wait_all does not pass the
  // cancellation off as success.
  mutable std::atomic<bool> reported{false};
};

}  // namespace versa::detail
