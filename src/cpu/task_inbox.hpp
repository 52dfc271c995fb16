// Tasks handed to a worker by threads that are not workers (the main program submitting ready
// tasks round-robin). A lock-free stack: a push is one compare-and-swap on a line the owner
// touches only when it takes the whole stack at once, so the submitting thread and the worker
// do not trade a cache line per task as they would on the worker's deque lock.
#pragma once

#include <atomic>

#include "base/task.hpp"

namespace versa::detail {

class TaskInbox {
 public:
  void push(Task* task) {
    Task* head = head_.load(std::memory_order_relaxed);
    do {
      task->ready_next = head;
    } while (!head_.compare_exchange_weak(head, task, std::memory_order_release,
                                          std::memory_order_relaxed));
  }

  // Takes every task, newest first, linked through ready_next; null when empty.
  Task* take_all_newest_first() {
    if (empty()) return nullptr;
    return head_.exchange(nullptr, std::memory_order_acquire);
  }

  bool empty() const { return head_.load(std::memory_order_relaxed) == nullptr; }

 private:
  std::atomic<Task*> head_{nullptr};
};

}  // namespace versa::detail
