// The CPU worker threads: one ready deque each, random-victim stealing, and an idle protocol
// that spins briefly, then yields, then sleeps until work is pushed.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "cpu/asymmetric_fence.hpp"
#include "cpu/ready_deque.hpp"
#include "cpu/task_inbox.hpp"
#include "cpu/topology.hpp"

namespace versa::detail {

class WorkerPool;

// The pool and index of the worker running on this thread (a worker thread's for its life, the
// attached caller's while attached); a thread belongs to at most one pool. Known to be
// constant-initialised, so that reading them costs no call.
extern constinit thread_local const WorkerPool* this_thread_pool;
extern constinit thread_local int this_thread_worker;

// What the workers do with a task; implemented by the runtime core.
class TaskRunner {
 public:
  virtual void run_task(Task* task, int worker) = 0;
  // Called on a worker thread in each round of its search for a task (it found none), and before
  // it sleeps.
  virtual void worker_idle(int worker) = 0;
  virtual void worker_sleeping(int worker) = 0;
  // Called when a worker found nothing in any deque: may queue work for it (push_local) from
  // elsewhere and return true.
  virtual bool pull_work(int worker) = 0;
  // Whether pull_work may find something (a hint, read before a worker sleeps).
  virtual bool work_to_pull() const = 0;
  // Called once on each worker thread before it takes work, and after it stops.
  virtual void worker_started(int worker) = 0;
  virtual void worker_stopping(int worker) = 0;

 protected:
  ~TaskRunner() = default;
};

class WorkerPool {
 public:
  // Starts `count` workers (pinned to cores when `pin`); with `caller_slot`, one more worker
  // index, count, has no thread of its own: a thread that waits takes it (attach_caller).
  WorkerPool(int count, bool pin, const Topology& topology, TaskRunner& runner,
             bool caller_slot = false);
  ~WorkerPool();  // stop()
  // Stops and joins the workers; queued tasks must have been drained. Idempotent.
  void stop();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()); }

  // Makes the calling thread, which must be no worker, the worker of the caller's slot and
  // returns its index; -1 when there is no such slot or another thread holds it. Until
  // detach_caller(), the thread runs tasks with run_one(index) like a worker.
  int attach_caller();
  // Gives the slot back; tasks left in its deque are stolen by the workers (one is woken).
  void detach_caller();
  // On the attached caller: sleeps as an idle worker does (a push may wake it) until work may be
  // had or `done()` holds. `done` is checked once the sleeper is counted, so wake_all() called
  // after it became true is never missed.
  void caller_sleep(const std::function<bool()>& done);
  // Wakes every sleeper, the caller among them (its condition may now hold).
  void wake_all();

  // Index of the calling thread's worker in this pool, or -1 for any other thread.
  int current_worker() const { return this_thread_pool == this ? this_thread_worker : -1; }

  // Most threads that are not workers with a submission deque of their own.
  static constexpr int max_submitters = 16;
  // Index (below max_submitters) of the calling thread's submission deque, made on its first
  // call; -1 when every one is taken. The thread must be no worker.
  int submitter();
  // Queues a ready task from a thread that is not one of this pool's workers: on that thread's
  // submission deque (`submitter`, from submitter()), from which the workers steal, oldest
  // first. A push is then a plain store on a line the thread owns, not a compare-and-swap on a
  // line the workers write too (which cost the submitting thread a cache miss per task).
  // Round-robin into the workers' inboxes when every submission deque is taken (`submitter` is
  // -1).
  void push_external(int submitter, Task* task);
  void push_external(Task* task) { push_external(submitter(), task); }
  // On the attached caller (`worker`, from attach_caller) that owns submission deque
  // `submitter`: runs the newest task there; false when no more than a thief's batch
  // (submitted_batch) is left, which the workers take.
  bool run_submitted(int submitter, int worker);
  // On the thread that owns submission deque `submitter`: whether `count` tasks or more wait in
  // it (prioritised ones aside).
  bool submitted_at_least(int submitter, std::size_t count) {
    return submission_deques_[submitter].load(std::memory_order_relaxed)->holds_at_least(count);
  }

  // Queues a ready task for worker `worker` from any thread (its inbox, which others may steal
  // from), and wakes a sleeper.
  void push_to(int worker, Task* task);

  // Queues a ready task at the front of worker `worker`'s own deque (called on that worker).
  void push_local(int worker, Task* task);

  // Whether a task of positive priority waits in a submission deque (a hint).
  bool prioritised_submitted() const {
    return prioritised_submitted_.load(std::memory_order_relaxed) > 0;
  }

  // Tasks in worker `worker`'s own deque (a hint; called on that worker).
  std::size_t queued_locally(int worker) const { return workers_[worker]->deque.size_hint(); }

  // Runs one ready task on worker `worker` (its own first, else stolen); false if none found.
  bool run_one(int worker);

  // Tells the workers that work may be had from TaskRunner::pull_work: wakes one if all sleep.
  void notify_work() { wake_one(); }

  // Whether a task is queued or on its way between queues (a hint).
  bool any_queued() const;

 private:
  struct alignas(64) Worker {
    ReadyDeque deque;
    alignas(64) TaskInbox inbox;  // its own line: written by submitting threads
    std::uint64_t rng_state = 0;
    std::thread thread;
  };

  // Most tasks a worker takes from a submission deque at once (about half of what is there).
  static constexpr std::size_t submitted_batch = 32;

  Task* steal_submitted(int thief);

  void start(int index, bool pin, const Topology& topology);
  void loop(int index);
  Task* find_task(int worker);
  // Out of line: the common case, a task in the worker's own deque, then saves no registers.
  [[gnu::noinline]] Task* find_elsewhere(int worker);
  Task* take_inbox(int worker, int into);
  Task* steal(int thief);
  void sleep(const std::function<bool()>* done = nullptr);
  void wake_one();
  // Out of line: most pushes find no sleeper, and return without saving registers.
  [[gnu::noinline]] void wake_sleeper();
  int sleepers_after_push();

  TaskRunner& runner_;
  const std::uint64_t id_;  // tags the threads' cached submission deques
  std::vector<std::unique_ptr<Worker>> workers_;
  // Submission deques, one per thread that is not a worker: the first `submitters_` of
  // `submission_deques_` are set (published with release, never changed), and only their
  // threads push to them. `submitter_threads_` maps threads to them, for a thread whose cache
  // (submission_deque) served another pool since.
  std::array<std::atomic<ReadyDeque*>, max_submitters> submission_deques_{};
  std::atomic<int> submitters_{0};
  Mutex submitters_mutex_;
  std::array<std::thread::id, max_submitters> submitter_threads_
      VERSA_GUARDED_BY(submitters_mutex_);
  std::vector<std::unique_ptr<ReadyDeque>> owned_deques_ VERSA_GUARDED_BY(submitters_mutex_);
  int threads_ = 0;  // workers_[0, threads_) have threads; the caller's slot follows
  std::atomic<bool> caller_attached_{false};
  std::atomic<int> transferring_{0};  // inboxes being moved into a deque (take_inbox)
  std::atomic<bool> stopping_{false};
  // Sleep protocol: a worker that found no work increments sleepers_, issues a full fence (the
  // heavy half of fence_), looks at every deque once more and only then waits on wake_epoch_. A
  // pusher publishes its task, issues the light half of fence_ and reads sleepers_
  // (sleepers_after_push). The fence guarantees that either the sleeper sees the task or the
  // pusher sees the sleeper (and bumps wake_epoch_). wake_pending_ makes a burst of pushes cost
  // one wake-up, not one system call each; the worker that goes to sleep or wakes up clears it
  // (see sleep()).
  AsymmetricFence fence_;
  // Each on its own line: every push reads sleepers_, which changes only when a worker goes to
  // sleep or wakes, while searching_ changes whenever a worker runs out of work or finds some.
  alignas(64) std::atomic<int> sleepers_{0};
  alignas(64) std::atomic<int> searching_{0};  // workers spinning or yielding in search of work
  // Tasks of positive priority in the submission deques (a hint). A worker takes them before
  // the unprioritised tasks of its own deque: otherwise the tasks a finish made ready there (the
  // readers a writer released) ran first, while prioritised tasks a thread submitted waited for
  // the other workers. Written only when such tasks come and go, so the load in every search
  // hits the cache.
  alignas(64) std::atomic<int> prioritised_submitted_{0};
  std::atomic<bool> wake_pending_{false};
  std::atomic<std::uint32_t> wake_epoch_{0};
};

// In line: a spawn pushes a task and looks for a sleeper once per task.
inline void WorkerPool::push_local(int worker, Task* task) {
  workers_[worker]->deque.push_front(task);
  if (workers_.size() > 1) wake_one();
}

inline void WorkerPool::wake_one() {
  if (sleepers_after_push() != 0) wake_sleeper();
}

// The pusher's half of the sleep protocol (see sleepers_). ThreadSanitizer models neither fences
// nor membarrier, so under it the fences become read-modify-writes of the sleeper count, which
// give the same guarantee in a form it understands: either the pusher's RMW comes later in the
// count's modification order (and sees the sleeper) or the sleeper's increment synchronises with
// it (and the sleeper then sees the task).
inline int WorkerPool::sleepers_after_push() {
#if VERSA_TSAN
  return sleepers_.fetch_add(0, std::memory_order_seq_cst);
#else
  fence_.light();
  return sleepers_.load(std::memory_order_relaxed);
#endif
}

}  // namespace versa::detail
