// Scheduler (core/scheduler.hpp): waiting for tasks. sync() waits for the children of the
// calling task or of the main program, wait_for_pending() for every task, settle() for the
// accesses of a handle being destroyed. A worker helps with other tasks meanwhile
// (Scheduler::help_until); a thread that is no worker takes the caller's slot when there is one,
// also to run its own backlog of submitted tasks.
#include <chrono>
#include <functional>
#include <thread>
#include <utility>

#include "base/spin_lock.hpp"
#include "core/scheduler.hpp"
#include "core/scheduler_thread.hpp"

namespace versa::detail {

// --- Procedure: wait ------------------------------------------------------------------------

// The caller keeps its slot until `done()`: when it has found nothing for about as long as a
// worker searches, it sleeps as an idle worker does, so that a task pushed later wakes it (or a
// worker) and the waiting thread stays one of the workers for the whole wait. Giving the slot up
// instead left one core idle for the rest of a wait whenever work came in bursts further apart
// than that search (UTS on 2 cores: a speedup of 0.9 instead of 1.8).
template <class Done>
void Scheduler::help_as_caller(Done&& done) {
  const int worker = pool_->attach_caller();
  if (worker < 0) return;
  Scheduler* const enclosing = std::exchange(this_thread_scheduler, this);
  constexpr int idle_limit = 64;
  const std::function<bool()> condition = done;
  for (int idle = 0; !done();) {
    if (pool_->run_one(worker)) {
      idle = 0;
      continue;
    }
    count_finished(worker);  // so that done() sees the tasks this thread finished
    if (done()) break;
    // Tasks on their way between queues are not "nothing found".
    if (pool_->any_queued() || ++idle < idle_limit) {
      std::this_thread::yield();
      continue;
    }
    pool_->caller_sleep(condition);
    idle = 0;
  }
  count_finished(worker);
  pool_->detach_caller();
  this_thread_scheduler = enclosing;
}

// The newest first, as OpenMP runs a task at once when too many are queued: it is the one whose
// record and captures are still in this thread's cache, while the workers take the oldest. What
// those tasks push on the slot's own deque runs before submission goes on, rather than wait
// there for a worker to steal it.
void Scheduler::run_backlog(int submitter) {
  const int worker = pool_->attach_caller();
  if (worker < 0) return;  // another thread waits in the slot
  Scheduler* const enclosing = std::exchange(this_thread_scheduler, this);
  const std::size_t keep = submission_window_ / 2;
  while (pool_->submitted_at_least(submitter, keep + 1) && pool_->run_submitted(submitter, worker))
    while (pool_->queued_locally(worker) != 0 && pool_->run_one(worker)) {
    }
  count_finished(worker);
  pool_->detach_caller();
  this_thread_scheduler = enclosing;
}

void Scheduler::sync() {
  const int worker = current_worker();
  if (Task* task = worker >= 0 ? this_thread_task : nullptr) {
    help_until(worker, [task] { return task->children.load(std::memory_order_acquire) == 0; });
    return;
  }
  if (Task* task = worker < 0 ? device_body_task() : nullptr) {
    wait_for_children_on_device(*task);
    return;
  }
  if (worker < 0)
    help_as_caller([this] { return root_.children.load(std::memory_order_acquire) == 0; });
  for (std::uint32_t c; (c = root_.children.load(std::memory_order_acquire)) != 0;)
    root_.children.wait(c);
}

void Scheduler::wait_for_pending() {
  pending_watchers_.fetch_add(1, std::memory_order_seq_cst);
  struct Unwatch {
    std::atomic<int>& watchers;
    ~Unwatch() { watchers.fetch_sub(1, std::memory_order_relaxed); }
  } unwatch{pending_watchers_};
  if (current_worker() < 0) help_as_caller([this] { return pending() == 0; });
  // Short waits are common (a phase of small tasks) and a futex wake-up costs tens of
  // microseconds on virtual machines, so poll briefly, yielding the core, before sleeping.
  // Spin first: a chain of a few small tasks ends within microseconds, and a yield costs about
  // as much here (generations with n = 1: 4.4 us in wait_all when yielding at once, 1.4 us so).
  for (int i = 0; i < 256 && pending() != 0; ++i) VERSA_CPU_RELAX();
  const auto poll_until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
  while (pending() != 0 && std::chrono::steady_clock::now() < poll_until) std::this_thread::yield();
  // Sleeps on pending_, which every end changes (subtract_finished wakes it at zero); the
  // submitting threads' counts do not change while they wait.
  for (std::int64_t p = pending_.load(std::memory_order_acquire); p + submitted_by_threads() != 0;
       p = pending_.load(std::memory_order_acquire))
    pending_.wait(p);
  // A Completion completed on another thread may still be waking waiters after the last finish.
  while (releases_under_way_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

void Scheduler::settle(HandleState& handle) {
  bring_home(handle);  // waits for the accesses of the root and of its newest instance
  const int worker = current_worker();
  if (worker < 0) {
    // A host access after them (behind the flush of an open run of adds, which registering it
    // adds) sleeps until they are done.
    AccessRecord record;
    record.handle = &handle;
    record.mode = AccessMode::write;
    end_host_access(submit_host_access(record));
    return;
  }
  std::uint64_t required;
  if (handle.close_add_run(required)) submit_flush(&handle, required, worker);
  help_until(worker, [&] { return handle.pending_accesses() == 0; });
}

}  // namespace versa::detail
