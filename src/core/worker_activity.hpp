// What each CPU worker is doing, as far as the diagnostics need it (kept only when tracking is
// on): the tasks it is running, how many tasks have finished (the stall watchdog's sign of
// progress), and the span of the task it ran last (the DOT file's times).
//
// Each worker's slot is written by that worker alone; the running tasks are a stack under a
// spin lock that only a report contends (a body waiting in sync() runs other tasks above it),
// and the count is an atomic that the watchdog reads a few times a second, so no line is shared
// per task. Finishes on other threads (device workers, the main program's host accesses) count
// in one shared atomic: they are few.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "base/spin_lock.hpp"
#include "base/task.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class WorkerActivity {
 public:
  using Clock = std::chrono::steady_clock;

  explicit WorkerActivity(int workers) : slots_(static_cast<std::size_t>(workers)) {}

  // `worker` starts running `task` (at `start`, when times are kept).
  void started(int worker, const Task* task, Clock::time_point start) {
    Slot& slot = slots_[worker];
    SpinGuard guard(slot.lock);
    slot.running.push_back({task, start});
  }
  // `worker` is done running its innermost task (`end`: when, if times are kept); the span is
  // kept until the task's finish takes it (last_span).
  void stopped(int worker, Clock::time_point end) {
    Slot& slot = slots_[worker];
    SpinGuard guard(slot.lock);
    const Running innermost = slot.running.back();
    slot.running.pop_back();
    slot.last = {innermost.task, innermost.start, end};
  }
  // The span of `task` if it is the one `worker` ran last (so a finish that did not follow a
  // run, e.g. a flush with nothing to apply, gets none); clears it.
  bool last_span(int worker, const Task* task, Clock::time_point& start, Clock::time_point& end) {
    Slot& slot = slots_[worker];
    SpinGuard guard(slot.lock);
    if (slot.last.task != task) return false;
    start = slot.last.start;
    end = slot.last.end;
    slot.last.task = nullptr;
    return true;
  }

  // A task finished on `worker` (-1: another thread).
  void finished(int worker) {
    if (worker < 0) {
      other_finished_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    std::atomic<std::uint64_t>& count = slots_[worker].finished;
    count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // Tasks finished so far: only ever grows.
  std::uint64_t finished_count() const {
    std::uint64_t total = other_finished_.load(std::memory_order_relaxed);
    for (const Slot& slot : slots_) total += slot.finished.load(std::memory_order_relaxed);
    return total;
  }

  // Calls `visit(const Task*, int worker, bool innermost)` for each task a worker is running;
  // the pointers are only to be compared (the tasks may finish meanwhile).
  template <class Visit>
  void for_each_running(Visit&& visit) {
    for (std::size_t w = 0; w < slots_.size(); ++w) {
      Slot& slot = slots_[w];
      SpinGuard guard(slot.lock);
      for (std::size_t i = 0; i < slot.running.size(); ++i)
        visit(slot.running[i].task, static_cast<int>(w), i + 1 == slot.running.size());
    }
  }

 private:
  struct Running {
    const Task* task;
    Clock::time_point start;
  };
  struct Span {
    const Task* task = nullptr;
    Clock::time_point start;
    Clock::time_point end;
  };
  struct alignas(64) Slot {
    SpinLock lock;
    std::vector<Running> running VERSA_GUARDED_BY(lock);
    Span last VERSA_GUARDED_BY(lock);
    std::atomic<std::uint64_t> finished{0};  // written by the slot's worker only
  };

  std::vector<Slot> slots_;
  std::atomic<std::uint64_t> other_finished_{0};
};

}  // namespace versa::detail
