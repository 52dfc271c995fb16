// What the files of the Scheduler share about the calling thread: the task whose body it runs
// and the scheduler it serves, and the loop in which a worker runs other tasks while it waits.
// Internal to those files (scheduler.cpp, task_execution.cpp, host_access.cpp, waiting.cpp).
#pragma once

#include <thread>

#include "core/scheduler.hpp"

namespace versa::detail {

// The task running on this thread (for spawn/sync); null outside tasks.
extern constinit thread_local Task* this_thread_task;
// The scheduler whose workers (or caller's slot) this thread serves, for versa::detach(); set
// once per worker thread, so that running a body costs nothing more.
extern constinit thread_local Scheduler* this_thread_scheduler;
// Both constinit: their definitions (scheduler.cpp) need no dynamic initialisation, so the other
// files read them directly rather than through a call to a thread-local wrapper.

// A worker never blocks (the task it waits for may be queued behind it, on its own deque): it
// runs other ready tasks, and yields the core when there are none.
template <class Done>
void Scheduler::help_until(int worker, Done&& done) {
  while (!done()) {
    // A wait inside a finish (a handle destroyed with the finished task's closure) may have
    // left what it waits for as this worker's continuation, which only the run that finished
    // the task would take: it goes on the deque, where run_one finds it.
    if (Task*& next = worker_locals_[worker].continuation) {  // read first: sync loops here
      pool_->push_local(worker, next);
      next = nullptr;
    }
    if (!pool_->run_one(worker)) std::this_thread::yield();
  }
}

}  // namespace versa::detail
