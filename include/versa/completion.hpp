#pragma once

#include <exception>

namespace versa {

namespace detail {
class Task;       // src/base/task.hpp
class Scheduler;  // src/core/scheduler.hpp
}  // namespace detail

// The end of a task that finishes after its body has returned: obtained inside a task body with
// versa::detach(). The task's accesses are released (its dependents may run, wait_all() may
// return) only once its body has returned and every Completion it handed out has been completed
// or failed. This is what OpenMP's detach clause and OmpSs-2's external events offer: the body
// starts an asynchronous operation (a nonblocking MPI transfer, asynchronous I/O), passes the
// Completion to whoever sees the operation end, and returns at once, so that no worker thread
// blocks on it.
//
//   rt.submit("send", [&](versa::Span<const double> x) {
//     io.start_write(x, [done = versa::detach()]() mutable { done.complete(); });
//   }, versa::read(hx));
//
// Movable, not copyable. complete() and fail() may be called from any thread, once; a
// Completion destroyed without either fails its task (a task that could never finish would
// hang wait_all()). Until then the task's data must stay as the operation needs it: the task
// still holds its accesses.
class Completion {
 public:
  Completion() = default;
  Completion(Completion&& other) noexcept;
  Completion& operator=(Completion&& other) noexcept;
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;
  // Fails the task if neither complete() nor fail() was called.
  ~Completion();

  // Whether the Completion still holds its task's end (neither complete() nor fail() called,
  // not moved from).
  explicit operator bool() const { return task_ != nullptr; }

  // The asynchronous operation succeeded: releases this hold on the task's end. Throws
  // std::logic_error on an empty Completion.
  void complete();

  // The asynchronous operation failed with `error`: the task counts as failed (its outputs are
  // spoilt, its dependents cancelled, wait_all() throws TaskFailure for it), then this hold is
  // released. Throws std::logic_error on an empty Completion.
  void fail(std::exception_ptr error);

 private:
  friend Completion detach();
  Completion(detail::Scheduler* scheduler, detail::Task* task)
      : scheduler_(scheduler), task_(task) {}
  detail::Scheduler* scheduler_ = nullptr;
  detail::Task* task_ = nullptr;
};

// Called inside a task body running on a CPU worker: takes a hold on the end of the running
// task and returns it as a Completion (see there). A body may detach several times (up to 254
// Completions); each must be completed or failed. Throws std::logic_error outside a task body
// that runs on a CPU worker (on the main program's thread, or in a body run by an accelerator).
Completion detach();

}  // namespace versa
