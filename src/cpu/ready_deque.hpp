// The ready tasks of one worker: a Chase-Lev work-stealing deque (Chase & Lev, SPAA 2005, in the
// C11 formulation of Lê, Pop, Cohen & Zappa Nardelli, PPoPP 2013). The owner pushes and pops at
// the bottom (a task woken by the task it just finished runs next, while its data is hot);
// thieves take from the top, where the oldest tasks are. A push costs the owner no atomic
// read-modify-write and a pop one fence, against a lock taken and released for each under a
// spin lock: with tasks of a few additions (BOTS fib), those were a fifth of a task's cost.
//
// Tasks with a non-zero priority are kept apart in a heap under a spin lock, so that priorities
// break ties without costing anything to the common, unprioritised case: both ends look at the
// heap only when its count says it holds something.
//
// Owner operations (push_front, push_list, pop_front) are called by one thread at a time: the
// worker, or the thread holding the caller's slot (handed over with acquire/release).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/spin_lock.hpp"
#include "base/task.hpp"

namespace versa::detail {

class ReadyDeque {
 public:
  ReadyDeque() {
    rings_.push_back(std::make_unique<Ring>(initial_capacity));
    ring_.store(rings_.back().get(), std::memory_order_relaxed);
  }

  // Owner: pushes a task that pop_front returns next (unless a prioritised one comes first).
  void push_front(Task* task) {
    if (task->priority != 0) return push_prioritised(task);
    push_bottom(task);
  }

  // Owner: pushes a list linked through ready_next so that pop_front returns its last task
  // first and thieves its first one.
  void push_list(Task* list) {
    while (list) {
      Task* task = list;
      list = list->ready_next;
      push_front(task);
    }
  }

  // Owner: the highest positive priority first, then the bottom, then negative priorities.
  Task* pop_front() {
    if (prioritised_.load(std::memory_order_relaxed) != 0) {
      if (Task* task = pop_prioritised(/*positive_only=*/true)) return task;
    }
    if (Task* task = pop_bottom()) return task;
    if (prioritised_.load(std::memory_order_relaxed) != 0) return pop_prioritised(false);
    return nullptr;
  }

  // Thief: prioritised work first (what the owner would run next anyway), then the top.
  Task* pop_back() {
    if (prioritised_.load(std::memory_order_relaxed) != 0) {
      if (Task* task = pop_prioritised(/*positive_only=*/true)) return task;
    }
    if (Task* task = steal_top()) return task;
    if (prioritised_.load(std::memory_order_relaxed) != 0) return pop_prioritised(false);
    return nullptr;
  }

  // Thief, on a deque whose owner only pushes, or pops with pop_bottom_beyond (a submission
  // deque: the top can move by more than one): takes about half of the unprioritised tasks, at most
  // `capacity`, with one compare-and-swap, oldest first into `out`; returns how many (0 when
  // there were none or another thief got there first). One thief taking tasks one at a time
  // pays a transfer of the top's line per task, and two thieves fight over it.
  std::size_t steal_half(Task** out, std::size_t capacity) {
    if (prioritised_.load(std::memory_order_relaxed) != 0) {  // one at a time, highest first
      out[0] = pop_back();
      return out[0] ? 1 : 0;
    }
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return 0;
    const auto count =
        static_cast<std::size_t>(std::min(static_cast<std::int64_t>(capacity), (b - t + 1) / 2));
    Ring* ring = ring_.load(std::memory_order_acquire);
    // Read before the compare-and-swap: the owner writes no slot at or above the top it last
    // read, so the slots hold these tasks as long as the top has not moved.
    for (std::size_t i = 0; i < count; ++i) out[i] = ring->get(t + static_cast<std::int64_t>(i));
    if (!top_.compare_exchange_strong(t, t + static_cast<std::int64_t>(count),
                                      std::memory_order_seq_cst, std::memory_order_relaxed))
      return 0;
    return count;
  }

  // Whether a prioritised task is queued (a hint).
  bool holds_prioritised() const { return prioritised_.load(std::memory_order_relaxed) != 0; }

  // Owner: whether `count` unprioritised tasks or more are queued. Like a push, it reads top_
  // only when the top it last read says so (top_ only grows): a submitting thread asks after
  // every push, and a read of top_ each time bounced its line with the thieves taking from it.
  bool holds_at_least(std::size_t count) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const auto wanted = static_cast<std::int64_t>(count);
    if (b - top_seen_ < wanted) return false;
    top_seen_ = top_.load(std::memory_order_relaxed);
    return b - top_seen_ >= wanted;
  }

  // Owner of a submission deque (thieves take from it with steal_half, at most `reach` tasks at
  // once): takes the newest unprioritised task when more than `reach` are queued, else none. A
  // thief's batch starts at the top it read and ends `reach` tasks above it at most, so a pop
  // that leaves more than that below it cannot take a task in that batch without a
  // compare-and-swap; a pop nearer the top could, several pops in a row past a thief that is
  // between its read and its compare-and-swap.
  Task* pop_bottom_beyond(std::size_t reach) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    bottom_.store(b, std::memory_order_seq_cst);  // as in pop_bottom
    const std::int64_t t = top_.load(std::memory_order_seq_cst);
    top_seen_ = t;
    if (b - t < static_cast<std::int64_t>(reach)) {
      bottom_.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    return ring_.load(std::memory_order_relaxed)->get(b);
  }

  // Number of queued tasks: a hint (exact only while no one pushes or pops). Read by thieves
  // and by workers deciding to sleep (the sleep protocol in worker_pool.cpp makes that safe).
  std::size_t size_hint() const {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_relaxed);
    return static_cast<std::size_t>(b > t ? b - t : 0) +
           prioritised_.load(std::memory_order_relaxed);
  }

 private:
  static constexpr std::size_t initial_capacity = 256;

  // A circular array of task pointers; replaced by one twice as large when full. Replaced rings
  // are kept until the deque goes, as a thief may still be reading one.
  struct Ring {
    explicit Ring(std::size_t capacity)
        : mask(capacity - 1), slots(new std::atomic<Task*>[capacity]()) {}  // touched now
    std::size_t capacity() const { return mask + 1; }
    Task* get(std::int64_t i) const {
      return slots[static_cast<std::size_t>(i) & mask].load(std::memory_order_relaxed);
    }
    void put(std::int64_t i, Task* task) {
      slots[static_cast<std::size_t>(i) & mask].store(task, std::memory_order_relaxed);
    }
    const std::size_t mask;
    const std::unique_ptr<std::atomic<Task*>[]> slots;
  };

  void push_bottom(Task* task) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    Ring* ring = ring_.load(std::memory_order_relaxed);
    const auto full = [&] {
      return b - top_seen_ > static_cast<std::int64_t>(ring->capacity()) - 1;
    };
    // The top the owner last read is at most the real one: a ring that is not full by it is not
    // full. Reading top_ only then spares the owner a cache miss per push while thieves take
    // what it pushes (the thread submitting to workers that keep up with it).
    if (full()) {
      top_seen_ = top_.load(std::memory_order_acquire);
      if (full()) ring = grow(ring, top_seen_, b);
    }
    ring->put(b, task);
    // Release: a thief that sees the new bottom sees the slot and the task it points to (a plain
    // store on x86, and a form ThreadSanitizer understands, unlike a release fence).
    bottom_.store(b + 1, std::memory_order_release);
  }

  Task* pop_bottom() {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    Ring* ring = ring_.load(std::memory_order_relaxed);
    // Sequentially consistent store then load: a thief that read the old bottom has taken its
    // element from top_ before this load, or sees the new bottom and backs off.
    bottom_.store(b, std::memory_order_seq_cst);
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    top_seen_ = t;
    if (t > b) {  // empty
      bottom_.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    Task* task = ring->get(b);
    if (t == b) {  // the last one: race the thieves for it
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                        std::memory_order_relaxed))
        task = nullptr;
      bottom_.store(b + 1, std::memory_order_relaxed);
    }
    return task;
  }

  Task* steal_top() {
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return nullptr;
    // Acquire: the ring the owner published on growing, with the slots it copied.
    Ring* ring = ring_.load(std::memory_order_acquire);
    Task* task = ring->get(t);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                      std::memory_order_relaxed))
      return nullptr;  // another thief or the owner took it; the caller tries elsewhere
    return task;
  }

  // Out of line, as are the prioritised paths: the owner's push and pop are a few instructions,
  // which would otherwise save the registers of these on every call.
  [[gnu::noinline]] Ring* grow(Ring* old, std::int64_t t, std::int64_t b) {
    auto bigger = std::make_unique<Ring>(old->capacity() * 2);
    for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
    Ring* ring = bigger.get();
    {
      SpinGuard guard(lock_);
      rings_.push_back(std::move(bigger));
    }
    ring_.store(ring, std::memory_order_release);
    return ring;
  }

  static bool higher(const Task* a, const Task* b) { return a->priority < b->priority; }

  [[gnu::noinline]] void push_prioritised(Task* task) {
    SpinGuard guard(lock_);
    heap_.push_back(task);
    std::push_heap(heap_.begin(), heap_.end(), higher);
    prioritised_.store(heap_.size(), std::memory_order_relaxed);
  }

  [[gnu::noinline]] Task* pop_prioritised(bool positive_only) {
    SpinGuard guard(lock_);
    if (heap_.empty() || (positive_only && heap_.front()->priority <= 0)) return nullptr;
    std::pop_heap(heap_.begin(), heap_.end(), higher);
    Task* task = heap_.back();
    heap_.pop_back();
    prioritised_.store(heap_.size(), std::memory_order_relaxed);
    return task;
  }

  // Apart, so that the owner's bottom and the thieves' top do not share a line.
  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::int64_t top_seen_ = 0;  // owner only: top_ as it last read it
  std::atomic<Ring*> ring_{nullptr};
  std::atomic<std::size_t> prioritised_{0};  // heap_.size(), readable without the lock

  SpinLock lock_;
  std::vector<Task*> heap_ VERSA_GUARDED_BY(lock_);
  std::vector<std::unique_ptr<Ring>> rings_ VERSA_GUARDED_BY(lock_);  // the current one last
};

}  // namespace versa::detail
