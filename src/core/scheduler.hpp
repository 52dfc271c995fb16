// The life cycle of tasks on the CPU side (DESIGN sections 1 and 2): creating a task and
// registering its accesses, parking it at the first handle whose version it lacks, taking the
// exclusive flags of commutes and adds, handing it to a worker when ready, running its body,
// finishing it (waking what waited for it) and the failure rule on the way; spawn/sync and the
// one loop that helps with other tasks while a worker waits.
//
// A runtime with accelerators gives the scheduler its DeviceDispatch, which places every ready
// task; without one, ready tasks go straight to the CPU workers and the device code costs one
// predictable branch per task.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/failure_log.hpp"
#include "base/task.hpp"
#include "base/wait_list.hpp"
#include "core/deferred_registrations.hpp"
#include "core/task_pool.hpp"
#include "core/task_statistics.hpp"
#include "core/task_tracker.hpp"
#include "core/trace.hpp"
#include "cpu/topology.hpp"
#include "cpu/worker_pool.hpp"
#include "data/reduction_engine.hpp"
#include "data/write_renaming.hpp"
#include "device/body_lane.hpp"

namespace versa::detail {

class DeviceDispatch;

class Scheduler final : public TaskRunner, public Waker, public BodyHost {
 public:
  // `workers` CPU workers; with `caller_slot`, the last of them is the slot of the thread that
  // waits (Config::caller_runs_tasks), and one fewer thread is started, and a thread that
  // submits runs ready tasks there when `submission_window` of them (0: no limit) wait in its
  // submission deque (Config::submission_window, resolved). `locality`: Config::locality. `tracker`
  // hears of host accesses, and of every task when it is tracking.
  Scheduler(int workers, TaskPool& pool, TraceRecorder& trace, FailureLog& failures,
            ReductionEngine& reductions, WriteRenaming& renaming, TaskTracker& tracker,
            const char* flush_name, bool caller_slot, std::size_t submission_window, bool locality);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Devices present (set before start); null in CPU-only runtimes.
  void set_devices(DeviceDispatch* devices) { devices_ = devices; }
  // Records per task type (set before start); null when Config::task_statistics is off.
  void set_task_statistics(TaskStatisticsLog* log) { task_statistics_ = log; }
  // Config::defer_registration (set before start): a thread outside the workers queues the
  // tasks it submits with accesses, and idle workers register them. Not with devices or task
  // tracking, whose bookkeeping at submission stays on the submitting thread.
  void set_defer_registration(bool defer) { defer_requested_ = defer; }
  // Starts the CPU workers; stops and joins them. Everything the workers reach must exist
  // between the two.
  void start(bool pin, const Topology& topology);
  void stop();

  int workers() const { return static_cast<int>(worker_locals_.size()); }
  // The calling thread's worker index, or -1 for any other thread.
  int current_worker() const { return pool_ ? pool_->current_worker() : -1; }
  // The parent a task submitted now, on `worker` (current_worker()), gets: the running task for
  // spawn() on a worker, the main program's root for spawn() elsewhere, none for submit().
  Task* parent_for(bool is_child, int worker) const;
  const Task* root() const { return &root_; }
  // The task of this runtime whose body runs on the calling thread of a device, or null.
  Task* device_body_task() const;
  // Whether the calling thread runs a body of this runtime's tasks (a CPU worker, the caller's
  // slot, a device's thread), where waiting for everything or holding data is refused.
  bool in_task_body() const { return current_worker() >= 0 || device_body_task(); }
  // Tasks of the main program not yet finished, give or take what workers finished and have
  // not yet subtracted (they do when they run out of work).
  std::int64_t pending() const;

  // --- the life cycle ---------------------------------------------------------------------
  // Creates, registers and counts a validated task submitted on `worker` (current_worker()),
  // and schedules it if it is ready.
  void submit(const TaskDesc& desc, Task* parent, int worker) {
    if (plain_tasks_ && desc.access_count == 0) {
      submit_plain(desc, parent, worker);
    } else {
      submit_general(desc, parent, worker);
    }
  }
  // spawn()'s short way (Runtime::start_child): the record of a child of the task running on
  // this worker, its closure to be constructed in the inline storage; null when plain tasks are
  // off or the calling thread runs no task of this runtime. Then submit_plain_child counts and
  // queues it, as submit_plain would.
  Task* start_plain_child(const char* name, InvokeFn invoke, DestroyFn destroy);
  void submit_plain_child(Task* task);
  // Registers and schedules the flush that applies `handle`'s partials at version `required`.
  void submit_flush(HandleState* handle, std::uint64_t required, int worker);
  // A task record for a host access (Runtime::acquire): registered like a task; returns when
  // the access may proceed (the thread sleeps meanwhile). Not on a worker. Called after
  // bring_home on the same handle, which registered the tasks queued before it (Config::
  // defer_registration). `registered_then`, when given, receives the count of accesses
  // registered on the access's instance just after it (OpenViews).
  Task* submit_host_access(const AccessRecord& record, std::uint64_t* registered_then = nullptr);
  // Ends a host access: finishes its access and frees the record.
  void end_host_access(Task* ticket);
  // Copies a renamed handle's data home to the user's memory, after every access registered
  // before (data/handle_state.hpp, renaming); nothing when it is home. Any thread; a worker
  // runs other tasks while it waits.
  void bring_home(HandleState& root);
  // Registers every task that waits in a deferred-registration queue (Config::
  // defer_registration), so that what the calling thread registers next comes after them: a
  // homecoming (and so every host access, which follows one), a handle's destruction or change of
  // operator, a prioritised task. Nothing when deferral is off.
  void register_deferred_tasks() {
    if (defer_)
      deferred_.register_all(
          [this, worker = current_worker()](Task* task) { register_deferred(task, worker); });
  }
  // Destroys a renamed instance no access will use again (from whatever thread finished its
  // last access); the data mover frees its device buffers without waiting.
  void drop_instance(HandleState* instance);
  // Hands a ready task to a CPU worker: the calling worker's deque, else round-robin.
  void push_to_cpu(Task* task, int worker);
  // With locality: the worker that last wrote the task's largest input, or -1 (none known, a
  // device wrote it, or it is the caller's slot, which may be left at any time).
  int home_worker(const Task& task) const;
  // Tells the CPU workers that a pooled task may be had (TaskRunner::pull_work).
  void notify_cpu_work() { pool_->notify_work(); }
  // Lets a host access proceed.
  static void release_host_access(Task* task);
  // The dispatch hands `task` to its device (task.node); `launched`: its data is there. For the
  // diagnostics, when tracking; called before the device may finish it.
  void placed_on_device(const Task& task, bool launched) {
    if (track_) track_->placed(task, task.node, launched);
  }
  // Finishes a task: its accesses (waking what waited), its parent's count, the record.
  void finish_task(Task* task, int worker);

  // --- failures ---------------------------------------------------------------------------
  // Whether a handle the task reads holds spoilt data (inherited_failure says whether the
  // spoilt value is the one the task reads).
  static bool reads_poisoned(const Task& task);
  // The failure a task inherits from spoilt data it reads (counted as a cancellation), or null.
  std::shared_ptr<const Failure> inherited_failure(Task* task);
  // Finishes `task` as cancelled when it reads spoilt data; returns whether it did.
  bool cancel_if_poisoned(Task& task);
  // Records that `task` failed with `error` (wait_all reports it) and returns the record.
  std::shared_ptr<Failure> record_failure(const Task& task, std::exception_ptr error,
                                          std::string message);
  // Records that `task` failed with `error` and finishes it, spoiling its outputs.
  void fail_task(Task* task, std::exception_ptr error, std::string message, int worker);

  // --- tasks that finish after their body (versa::detach) ---------------------------------
  // The scheduler and the task whose body runs on the calling thread, or nulls outside bodies
  // run by CPU workers.
  static Scheduler* current_scheduler();
  static Task* running_task();
  // Takes a hold on the end of `task`, whose body runs on the calling thread. Throws
  // std::logic_error when the task holds 254 already.
  void hold_finish(Task* task);
  // Releases a hold on the end of `task`; the last one finishes it. Any thread. With `error`,
  // the task is recorded as failed and its outputs spoilt first.
  void release_finish(Task* task, std::exception_ptr error);

  // --- bodies on devices (BodyHost) -------------------------------------------------------
  void run_body(Task& task, void (*body)(void*), void* context) override;

  // --- waiting ----------------------------------------------------------------------------
  // Waits until the children of the calling task (or of the main program) have finished.
  void sync();
  // Waits until every task submitted has finished.
  void wait_for_pending();
  // Tasks queued on the calling thread's worker (Runtime::surplus_tasks); 0 elsewhere.
  std::size_t surplus_tasks() const {
    const int worker = current_worker();
    return worker >= 0 ? pool_->queued_locally(worker) : 0;
  }
  // Applies the partials of `handle`'s open run of adds and waits until every access registered
  // on it has finished (a handle being destroyed): a worker helps with other tasks meanwhile,
  // another thread sleeps.
  void settle(HandleState& handle);

  // Waker: goes on with a task a handle released.
  void wake(Waiter* waiter, int worker) override;

  // TaskRunner
  void run_task(Task* task, int worker) override;
  // A worker flushes the tasks it finished into pending_ only when a thread waits for it, or
  // before it sleeps: a flush per task it finishes would bounce pending_'s line to the
  // submitting thread once per task while that thread submits.
  void worker_idle(int worker) override {
    if (pending_watchers_.load(std::memory_order_relaxed) != 0) count_finished(worker);
  }
  void worker_sleeping(int worker) override { count_finished(worker); }
  bool pull_work(int worker) override;
  bool work_to_pull() const override;
  void worker_started(int) override;
  void worker_stopping(int worker) override { count_finished(worker); }

 private:
  struct alignas(64) WorkerLocal {
    std::int64_t finished = 0;  // tasks finished and not yet subtracted from pending_
    // The first task made ready while this worker finishes one, when its deque is empty: it
    // runs next on this worker, with no queue round trip and no other worker woken for it.
    Task* continuation = nullptr;
    bool finishing = false;
  };

  // Whether a task with this parent counts in pending_. A spawned task's parent finishes only
  // after its children (the implicit sync at the end of a body), so the parent's own count
  // covers them: only tasks of the main program and those submitted without a parent count,
  // and the shared line is not touched once per fine-grained task.
  bool counted_in_pending(const Task* parent) const { return !parent || parent == &root_; }
  // The short path of a task without accesses when plain_tasks_ holds: the steps of submit and
  // of run_and_finish that such a task needs, in one function each (the general ones cost a
  // fine-grained task twice as many instructions, mostly in calls and branches that are void
  // for it).
  void submit_plain(const TaskDesc& desc, Task* parent, int worker);
  void submit_general(const TaskDesc& desc, Task* parent, int worker);
  // Sets the task's parent and counts the task in it and, for the main program's, in pending_
  // or, from a thread with a submission deque (`submitter`, else -1), in that thread's count.
  void count_submitted(Task* task, Task* parent, int submitter);
  void run_plain(Task* task, int worker);
  bool runs_plain(const Task& task) const {
    return plain_tasks_ && task.access_count == 0 && task.invoke;
  }
  // A task from the pool with the fields every task takes from its description.
  Task* construct_task(const char* name, int priority, InvokeFn invoke, DestroyFn destroy,
                       int worker);
  Task* construct_task(const TaskDesc& desc, int worker);
  Task* create_task(const TaskDesc& desc, int worker);
  void register_accesses(Task* task, int worker, bool may_rename);
  // Registers a task that waited in a deferred-registration queue, and schedules it if ready.
  void register_deferred(Task* task, int worker);
  bool try_make_ready(Task* task, int worker);
  bool take_exclusive_flags(Task* task, int worker);
  void schedule(Task* task, int worker);
  // Runs one task to its end (run_task runs it, then its continuations).
  void run_and_finish(Task* task, int worker);
  void finish_ran_task(Task* task, int worker);
  void run_body(Task* task, int worker, std::shared_ptr<const Failure>& cause);
  // The one help-while-waiting loop: runs other ready tasks on `worker` until `done()`.
  template <class Done>
  void help_until(int worker, Done&& done);
  // On a thread that is no worker: takes the caller's slot if there is one and it is free, and
  // runs ready tasks there until `done()` or until none has been found for a while.
  template <class Done>
  void help_as_caller(Done&& done);
  // On a thread that is no worker, after it submitted a task: when submission_window_ ready
  // tasks or more wait in its submission deque (`submitter`), runs them in the caller's slot, if
  // no other thread holds it, until half are left.
  void bound_backlog();
  [[gnu::noinline]] void run_backlog(int submitter);
  // Waits until the children of `task`, whose body runs on the calling thread of a device, have
  // finished, the thread's lane helping meanwhile.
  void wait_for_children_on_device(Task& task);
  // Waits until `done()` on the thread of a device that runs `task`'s body, helping its lane.
  void wait_in_device_body(Task& task, const std::function<bool()>& done);
  // Records that `task` threw `error`; returns the failure.
  std::shared_ptr<const Failure> record_failure(const Task& task, std::exception_ptr error);
  void poison_outputs(Task* task, const std::shared_ptr<const Failure>& cause);
  void finish_accesses(Task* task, int worker);
  Task* create_host_task(const char* name, std::uint32_t count, int worker);
  void wait_host_task(Task* task, int worker);
  void end_host_task(Task* task, int worker);
  void count_finished(int worker);
  // Subtracts `finished` ended tasks from pending_; wakes the waiters when none is left.
  void subtract_finished(std::int64_t finished);
  std::int64_t submitted_by_threads() const;
  // A count the waiting threads watch reached zero: wakes the threads sleeping on it and, with a
  // caller's slot, a caller sleeping among the workers.
  template <class Count>
  void notify_waiters(Count& count) {
    count.notify_all();
    if (caller_slot_) pool_->wake_all();
  }
  void destroy_task(Task* task, int worker);
  // The end of every finish: destroys the task, then tells its parent and pending_.
  void release_task(Task* task, int worker);
  [[gnu::noinline]] static void delete_staging_error(Task& task);

  TaskPool& task_pool_;
  TraceRecorder& trace_;
  FailureLog& failures_;
  ReductionEngine& reductions_;
  WriteRenaming& renaming_;
  TaskTracker& tracker_;
  TaskTracker* const track_;  // &tracker_ when it tracks every task, else null
  const char* const flush_name_;
  const bool caller_slot_;
  const std::size_t submission_window_;  // 0 without a caller's slot
  const bool locality_;
  // Nothing records tasks (no devices, trace, tracking or statistics), so tasks without
  // accesses take the short path. Set by start().
  bool plain_tasks_ = false;
  bool defer_requested_ = false;
  bool defer_ = false;  // registrations are deferred (set by start())
  DeviceDispatch* devices_ = nullptr;
  TaskStatisticsLog* task_statistics_ = nullptr;
  std::vector<WorkerLocal> worker_locals_;  // each element owned by its worker thread

  // Tasks submitted and not yet finished (counted_in_pending: spawned children count through
  // their parents) are pending_ plus the submitting threads' counts. Workers and flushes add to
  // pending_, a thread with a submission deque to its own count in submitted_, immediately (so
  // the sum can never reach zero early); the ends are subtracted from pending_ (which may go
  // below zero), by workers in batches (worker_idle), so the line is not bounced once per task.
  // On a line of its own: the members above are read by the workers for every task.
  alignas(64) std::atomic<std::int64_t> pending_{0};
  // Written by one submitting thread each (WorkerPool::submitter), read by the waiters and by
  // the workers when they subtract.
  struct alignas(64) SubmittedCount {
    std::atomic<std::int64_t> count{0};
  };
  std::array<SubmittedCount, WorkerPool::max_submitters> submitted_{};
  // Threads in wait_for_pending. Idle workers look at it in every round of their search, so a
  // waiter that comes after a worker decided not to flush is seen a round later.
  alignas(64) std::atomic<int> pending_watchers_{0};
  // Threads in release_finish (a Completion's): wait_for_pending returns once none is left, so
  // that the runtime is not destroyed under one still waking waiters after the last finish.
  std::atomic<int> releases_under_way_{0};
  // Parent of the tasks spawned by the main program (outside any task).
  Task root_;
  // One queue per submitting thread (its index in submitted_).
  static_assert(DeferredRegistrations::queue_count == WorkerPool::max_submitters);
  DeferredRegistrations deferred_;

  // Last: its threads run the members above.
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace versa::detail
