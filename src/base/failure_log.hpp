// The failures of a runtime's tasks and the misuse detected away from the call that caused it,
// kept until wait_all reports them; what is never reported goes to the diagnostics at shutdown.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/diagnostics.hpp"
#include "base/failure.hpp"
#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class FailureLog {
 public:
  explicit FailureLog(Diagnostics& diagnostics) : diagnostics_(diagnostics) {}
  // Hands what was never reported to the diagnostics.
  ~FailureLog();
  FailureLog(const FailureLog&) = delete;
  FailureLog& operator=(const FailureLog&) = delete;

  // A task failed (threw, or its device or data could not serve it).
  void record(std::shared_ptr<const Failure> failure);
  // Misuse found away from its call (a handle destroyed while in use); rethrown by wait_all as
  // std::logic_error.
  void record_misuse(std::string message);
  // A task was cancelled because of `cause`. A cause wait_all has reported already is recorded
  // again, so that the next wait_all does not pass the cancellation off as success.
  void cancelled_by(const std::shared_ptr<const Failure>& cause);
  // Tasks cancelled since the last wait_all.
  std::uint64_t cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

  // wait_all's report: takes everything recorded; throws TaskFailure for the first failure (the
  // others go to the diagnostics), else std::logic_error for the first misuse.
  void rethrow();

 private:
  Diagnostics& diagnostics_;
  Mutex mutex_;
  std::vector<std::shared_ptr<const Failure>> failures_ VERSA_GUARDED_BY(mutex_);
  std::vector<std::string> misuses_ VERSA_GUARDED_BY(mutex_);
  std::atomic<std::uint64_t> cancelled_{0};
};

}  // namespace versa::detail
