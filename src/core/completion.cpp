#include "versa/completion.hpp"

#include <stdexcept>
#include <utility>

#include "core/scheduler.hpp"

namespace versa {

Completion::Completion(Completion&& other) noexcept
    : scheduler_(std::exchange(other.scheduler_, nullptr)),
      task_(std::exchange(other.task_, nullptr)) {}

Completion& Completion::operator=(Completion&& other) noexcept {
  if (this != &other) {
    this->~Completion();
    scheduler_ = std::exchange(other.scheduler_, nullptr);
    task_ = std::exchange(other.task_, nullptr);
  }
  return *this;
}

// A task whose Completion is lost would never finish: failing it keeps wait_all() from hanging
// and says why.
Completion::~Completion() {
  if (!task_) return;
  std::exchange(scheduler_, nullptr)
      ->release_finish(std::exchange(task_, nullptr),
                       std::make_exception_ptr(std::logic_error(
                           "a versa::Completion was destroyed without complete() or fail()")));
}

void Completion::complete() {
  if (!task_) throw std::logic_error("versa::Completion::complete() on an empty Completion");
  std::exchange(scheduler_, nullptr)->release_finish(std::exchange(task_, nullptr), nullptr);
}

void Completion::fail(std::exception_ptr error) {
  if (!task_) throw std::logic_error("versa::Completion::fail() on an empty Completion");
  if (!error)
    error = std::make_exception_ptr(std::logic_error("versa::Completion::fail() with no error"));
  std::exchange(scheduler_, nullptr)->release_finish(std::exchange(task_, nullptr), error);
}

Completion detach() {
  detail::Scheduler* scheduler = detail::Scheduler::current_scheduler();
  detail::Task* task = detail::Scheduler::running_task();
  if (!scheduler || !task || task->host_access || task->reduction_flush)
    throw std::logic_error("versa::detach() called outside a task body running on a CPU worker");
  scheduler->hold_finish(task);
  return Completion(scheduler, task);
}

}  // namespace versa
