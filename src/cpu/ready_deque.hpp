// The ready tasks of one worker. The owner pushes and pops at the front (a task woken by the
// task it just finished runs next, while its data is hot); thieves take from the back, where the
// oldest tasks are. Tasks with a non-zero priority are kept apart in a heap so that priorities
// break ties without costing anything to the common, unprioritised case.
//
// A spin lock guards everything: the critical sections are a few pointer moves, and the
// heterogeneous scheduler will need to inspect queues, which lock-free deques make awkward.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "base/spin_lock.hpp"
#include "base/task.hpp"

namespace versa::detail {

class ReadyDeque {
 public:
  ReadyDeque() : ring_(new Task*[initial_capacity]), mask_(initial_capacity - 1) {}

  void push_front(Task* task) {
    SpinGuard guard(lock_);
    if (task->priority != 0) return push_prioritised(task);
    grow_if_full();
    head_ = (head_ - 1) & mask_;
    ring_[head_] = task;
    size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  void push_back(Task* task) {
    SpinGuard guard(lock_);
    if (task->priority != 0) return push_prioritised(task);
    grow_if_full();
    ring_[(head_ + count()) & mask_] = task;
    size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  // Appends a list linked through ready_next, in list order, under one lock acquisition.
  void push_back_list(Task* list) {
    SpinGuard guard(lock_);
    while (list) {
      Task* task = list;
      list = list->ready_next;
      if (task->priority != 0) {
        push_prioritised(task);
        continue;
      }
      grow_if_full();
      ring_[(head_ + count()) & mask_] = task;
      size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
  }

  // Owner side: the highest positive priority first, then the front, then negative priorities.
  Task* pop_front() {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
    SpinGuard guard(lock_);
    if (!heap_.empty() && (heap_.front()->priority > 0 || count() == 0)) return pop_prioritised();
    if (count() == 0) return nullptr;
    Task* task = ring_[head_];
    head_ = (head_ + 1) & mask_;
    size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return task;
  }

  // Thief side: prioritised work first (it is what the owner would run next anyway), then the
  // back.
  Task* pop_back() {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
    SpinGuard guard(lock_);
    if (!heap_.empty() && (heap_.front()->priority > 0 || count() == 0)) return pop_prioritised();
    if (count() == 0) return nullptr;
    const std::size_t last = (head_ + count() - 1) & mask_;
    size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return ring_[last];
  }

  // Number of queued tasks; a hint read without the lock (exact only while no one pushes or
  // pops).
  std::size_t size_hint() const { return size_.load(std::memory_order_relaxed); }

 private:
  static constexpr std::size_t initial_capacity = 256;
  static bool higher(const Task* a, const Task* b) { return a->priority < b->priority; }

  std::size_t count() const VERSA_REQUIRES(lock_) {
    return size_.load(std::memory_order_relaxed) - heap_.size();
  }

  void push_prioritised(Task* task) VERSA_REQUIRES(lock_) {
    heap_.push_back(task);
    std::push_heap(heap_.begin(), heap_.end(), higher);
    size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  Task* pop_prioritised() VERSA_REQUIRES(lock_) {
    std::pop_heap(heap_.begin(), heap_.end(), higher);
    Task* task = heap_.back();
    heap_.pop_back();
    size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return task;
  }

  void grow_if_full() VERSA_REQUIRES(lock_) {
    const std::size_t n = count();
    if (n <= mask_) return;
    const std::size_t capacity = (mask_ + 1) * 2;
    std::unique_ptr<Task*[]> bigger(new Task*[capacity]);
    for (std::size_t i = 0; i < n; ++i) bigger[i] = ring_[(head_ + i) & mask_];
    ring_ = std::move(bigger);
    mask_ = capacity - 1;
    head_ = 0;
  }

  SpinLock lock_;
  std::unique_ptr<Task*[]> ring_ VERSA_GUARDED_BY(lock_);
  std::size_t mask_ VERSA_GUARDED_BY(lock_);
  std::size_t head_ VERSA_GUARDED_BY(lock_) = 0;
  std::vector<Task*> heap_ VERSA_GUARDED_BY(lock_);
  // Ring plus heap entries. Written under lock_; read without it as an emptiness hint by thieves
  // and by workers deciding to sleep (the sleep protocol in worker_pool.cpp makes that safe).
  std::atomic<std::size_t> size_{0};
};

}  // namespace versa::detail
