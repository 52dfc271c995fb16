#pragma once

#include <exception>
#include <string>

namespace versa::detail {

// Why a task did not produce its outputs: the task that threw and what it threw. Shared by the
// handles it poisoned and by the tasks cancelled because of it.
struct Failure {
  std::string task_name;
  std::exception_ptr exception;
  std::string message;
};

}  // namespace versa::detail
