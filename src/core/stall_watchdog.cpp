#include "core/stall_watchdog.hpp"

#include <algorithm>
#include <chrono>

namespace versa::detail {

namespace {
using Clock = std::chrono::steady_clock;

// A look every 50 ms, or four per stall time when that is shorter (down to 5 ms), so that a
// stall is reported within a quarter of its time after it is due.
Clock::duration period_for(double seconds) {
  const double period = std::clamp(seconds / 4, 0.005, 0.05);
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(period));
}
}  // namespace

StallWatchdog::StallWatchdog(double seconds, Probe probe)
    : seconds_(seconds), probe_(std::move(probe)), thread_([this] { loop(); }) {}

void StallWatchdog::stop() {
  {
    MutexLock guard(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool StallWatchdog::sleep() {
  MutexLock lock(mutex_);
  wake_.wait_for(lock.native(), period_for(seconds_),
                 [this]() VERSA_REQUIRES(mutex_) { return stopping_; });
  return !stopping_;
}

void StallWatchdog::loop() {
  std::uint64_t seen = probe_.finished();
  Clock::time_point progress = Clock::now();  // last time a task finished, or nothing pended
  bool reported = false;
  while (sleep()) {
    const std::uint64_t finished = probe_.finished();
    const Clock::time_point now = Clock::now();
    if (finished != seen || !probe_.pending()) {
      seen = finished;
      progress = now;
      reported = false;
      continue;
    }
    const double stalled = std::chrono::duration<double>(now - progress).count();
    if (reported || stalled < seconds_) continue;
    probe_.emit(probe_.describe(stalled));
    reported = true;
  }
}

}  // namespace versa::detail
