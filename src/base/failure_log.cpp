#include "base/failure_log.hpp"

#include <stdexcept>

#include "versa/error.hpp"

namespace versa::detail {

FailureLog::~FailureLog() {
  MutexLock guard(mutex_);
  for (const auto& failure : failures_)
    diagnostics_.report("unreported failure of task '" + failure->task_name +
                        "': " + failure->message);
  for (auto& misuse : misuses_) diagnostics_.report(std::move(misuse));
}

void FailureLog::record(std::shared_ptr<const Failure> failure) {
  MutexLock guard(mutex_);
  failures_.push_back(std::move(failure));
}

void FailureLog::record_misuse(std::string message) {
  MutexLock guard(mutex_);
  misuses_.push_back(std::move(message));
}

void FailureLog::cancelled_by(const std::shared_ptr<const Failure>& cause) {
  cancelled_.fetch_add(1, std::memory_order_relaxed);
  if (cause->reported.exchange(false, std::memory_order_acq_rel)) record(cause);
}

void FailureLog::rethrow() {
  std::vector<std::shared_ptr<const Failure>> failures;
  std::vector<std::string> misuses;
  {
    MutexLock guard(mutex_);
    failures.swap(failures_);
    misuses.swap(misuses_);
  }
  const std::uint64_t cancelled = cancelled_.exchange(0);
  for (const auto& failure : failures) failure->reported.store(true, std::memory_order_release);
  for (std::size_t i = 1; i < failures.size(); ++i)
    diagnostics_.report("task '" + failures[i]->task_name +
                        "' also failed: " + failures[i]->message);
  if (!failures.empty())
    throw TaskFailure(failures[0]->task_name, failures[0]->exception, failures[0]->message,
                      cancelled);
  if (!misuses.empty()) throw std::logic_error(misuses[0]);
}

}  // namespace versa::detail
