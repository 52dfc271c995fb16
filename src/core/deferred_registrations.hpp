// Registrations that threads outside the workers hand to idle workers (Config::
// defer_registration), after DDAST (shared/reading/ddast-asynchronous-runtime-management.txt):
// a submitting thread creates and counts its task, then queues it with its accesses not yet
// registered on their handles, and returns; whoever holds the queue's turn registers the queued
// tasks in the order they came, each after the one before, as submit() would have. The turn is
// taken by a worker that found nothing to run (WorkerPool's search, through Scheduler::
// pull_work), a few tasks at a time, or by a thread that must see every queued task registered
// before it goes on (a host access, a handle brought home or destroyed).
//
// One queue per thread that has a submission deque (WorkerPool::submitter): a lock-free stack
// its thread alone pushes to, which the turn's holder takes whole and keeps, oldest first, in
// `taken` until it has registered all of it.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "base/spin_lock.hpp"
#include "base/task.hpp"

namespace versa::detail {

class DeferredRegistrations {
 public:
  static constexpr int queue_count = 16;  // WorkerPool::max_submitters

  // On the thread of queue `queue`: `task` waits there for its registration. Linked through
  // ready_next, which nothing else uses before the task is ready.
  void push(int queue, Task* task) {
    std::atomic<Task*>& incoming = queues_[queue].incoming;
    Task* head = incoming.load(std::memory_order_relaxed);
    do {
      task->ready_next = head;
    } while (!incoming.compare_exchange_weak(head, task, std::memory_order_release,
                                             std::memory_order_relaxed));
  }

  // Whether a task may wait for its registration (a hint; read after the sleep protocol's
  // fence, it sees every push that the pusher's wake-up check could have missed).
  bool any() const {
    for (const Queue& queue : queues_)
      if (queue.incoming.load(std::memory_order_relaxed) ||
          queue.taken.load(std::memory_order_relaxed))
        return true;
    return false;
  }

  // Registers, with `register_task(Task*)`, up to `limit` waiting tasks of the first queue whose
  // turn is free; returns how many it registered.
  template <class Register>
  std::size_t register_some(Register&& register_task, std::size_t limit) {
    for (Queue& queue : queues_) {
      if (!queue.incoming.load(std::memory_order_relaxed) &&
          !queue.taken.load(std::memory_order_relaxed))
        continue;
      if (!queue.turn.try_lock()) continue;
      const std::size_t registered = register_from(queue, register_task, limit);
      queue.turn.unlock();
      if (registered != 0) return registered;
    }
    return 0;
  }

  // Registers every task queued before the call, waiting for the turns that others hold: what
  // a holder left taken first, then what was pushed since.
  template <class Register>
  void register_all(Register&& register_task) {
    for (Queue& queue : queues_) {
      queue.turn.lock();
      while (register_from(queue, register_task, SIZE_MAX) != 0) {
      }
      queue.turn.unlock();
    }
  }

 private:
  struct alignas(64) Queue {
    std::atomic<Task*> incoming{nullptr};  // newest first; pushed by the queue's thread
    SpinLock turn;                         // held while registering this queue's tasks
    // Taken from `incoming` and not yet registered, oldest first. Written under `turn`; atomic
    // for any(), which reads it without the turn.
    std::atomic<Task*> taken{nullptr};
  };

  // Registers up to `limit` of the tasks taken, or, when none is left, of those pushed since.
  template <class Register>
  static std::size_t register_from(Queue& queue, Register& register_task, std::size_t limit) {
    Task* oldest = queue.taken.load(std::memory_order_relaxed);
    if (!oldest) {
      for (Task* task = queue.incoming.exchange(nullptr, std::memory_order_acquire); task;) {
        Task* older = task->ready_next;
        task->ready_next = oldest;
        oldest = task;
        task = older;
      }
    }
    std::size_t registered = 0;
    while (oldest && registered < limit) {
      Task* task = oldest;
      oldest = task->ready_next;  // read first: a task made ready may be linked elsewhere
      register_task(task);
      ++registered;
    }
    queue.taken.store(oldest, std::memory_order_relaxed);
    return registered;
  }

  std::array<Queue, queue_count> queues_{};
};

}  // namespace versa::detail
