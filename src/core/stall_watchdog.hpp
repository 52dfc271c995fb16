// The stall watchdog (Config::stall_report_seconds): a thread that wakes every 50 ms or so and
// checks whether any task has finished since its last look while tasks are pending; when none
// has for the configured time, it has the stall described and emits the text once, and again
// only after tasks have finished in between (a new stall).
//
// It reads counts that workers keep in their own slots (WorkerActivity), a few times a second:
// no task pays anything for it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class StallWatchdog {
 public:
  // What the watchdog looks at and what it does with a stall: `finished` only ever grows while
  // tasks finish; `pending` says whether work is pending; `describe(seconds)` writes the report
  // for a stall of that many seconds, and `emit` delivers it.
  struct Probe {
    std::function<std::uint64_t()> finished;
    std::function<bool()> pending;
    std::function<std::string(double seconds)> describe;
    std::function<void(const std::string& report)> emit;
  };

  // Starts the thread; `seconds` > 0.
  StallWatchdog(double seconds, Probe probe);
  // Stops and joins it.
  ~StallWatchdog() { stop(); }
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;

  // The same, earlier; at most one report in progress completes first.
  void stop();

 private:
  void loop();
  // Sleeps for one period; returns false when stopping.
  bool sleep();

  const double seconds_;
  const Probe probe_;
  Mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ VERSA_GUARDED_BY(mutex_) = false;
  std::thread thread_;  // last: starts after everything above is initialised
};

}  // namespace versa::detail
