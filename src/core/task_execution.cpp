// Scheduler (core/scheduler.hpp): running a task on a CPU worker and finishing it. The run
// checks the data it reads for failures, times the body and waits for its children (the implicit
// sync); the finish releases the task's accesses, which wakes the tasks that wait for them, and
// tells the task's parent and the count of pending tasks. Tasks that finish after their body
// (versa::detach) take holds on their end here too.
#include <chrono>
#include <stdexcept>
#include <utility>

#include "core/device_dispatch.hpp"
#include "core/scheduler.hpp"
#include "core/scheduler_thread.hpp"

namespace versa::detail {

// --- Procedure: run -------------------------------------------------------------------------

// A plain task leaves no continuation (its finish makes nothing ready): a tail call. Nor is a
// continuation ever plain (plain tasks are pushed when submitted, never made ready by a finish);
// run_and_finish would run one correctly anyway.
void Scheduler::run_task(Task* task, int worker) {
  if (runs_plain(*task)) return run_plain(task, worker);
  for (; task; task = std::exchange(worker_locals_[worker].continuation, nullptr))
    run_and_finish(task, worker);
}

// run_and_finish and finish_task for a task without accesses: no data to check or poison, and
// nothing that its finish could make ready.
void Scheduler::run_plain(Task* task, int worker) {
  Task* const enclosing = this_thread_task;
  this_thread_task = task;
  try {
    task->invoke(task->closure, task->accesses);
  } catch (...) {
    record_failure(*task, std::current_exception());
  }
  help_until(worker, [task] { return task->children.load(std::memory_order_acquire) == 0; });
  this_thread_task = enclosing;
  if (task->finish_holds.load(std::memory_order_relaxed) != 0 &&
      task->finish_holds.fetch_sub(1, std::memory_order_acq_rel) != 1)
    return;
  release_task(task, worker);
}

// The flags alone, in line: a task that reads no spoilt data (nearly every one) then builds,
// returns and destroys no shared_ptr. Running and finishing a task of cholesky-dag's shape took
// 841 instructions, 784 so (callgrind, empty bodies).
inline bool Scheduler::reads_poisoned(const Task& task) {
  for (std::uint32_t i = 0; i < task.access_count; ++i)
    if (reads_contents(task.accesses[i].mode) && task.accesses[i].handle->poisoned()) return true;
  return false;
}

// Only the finish of the task a worker just ran may leave a continuation: a finish inside a
// running body (a flush with nothing to apply) must not hide a task from that body's sync().
void Scheduler::finish_ran_task(Task* task, int worker) {
  worker_locals_[worker].finishing = true;
  finish_task(task, worker);
  worker_locals_[worker].finishing = false;
}

void Scheduler::run_and_finish(Task* task, int worker) {
  if (trace_.enabled()) trace_.ready_changed(worker, -1);
  if (track_) track_->started(*task, worker);
  if (!task->invoke && task->reduction_flush) {
    const auto start =
        trace_.enabled() ? TraceRecorder::Clock::now() : TraceRecorder::Clock::time_point();
    reductions_.apply_partials(task);
    if (trace_.enabled())
      trace_.record_flush(worker, task->name,
                          TraceRecorder::handle_label(task->accesses[0].handle->name()), start,
                          TraceRecorder::Clock::now());
    if (devices_) devices_->cpu_task_ended(*task);
  } else {
    // Only data can carry a failure to a task.
    std::shared_ptr<const Failure> cause =
        reads_poisoned(*task) ? inherited_failure(task) : nullptr;
    if (!cause) run_body(task, worker, cause);
    if (devices_) devices_->cpu_task_ended(*task);
    if (cause) poison_outputs(task, cause);
  }
  if (track_) track_->stopped(worker);
  // A detached task (versa::detach) finishes when the body's hold and every Completion's are
  // released: only the body's thread makes the count leave 0, so a 0 read here is final.
  if (task->finish_holds.load(std::memory_order_relaxed) != 0 &&
      task->finish_holds.fetch_sub(1, std::memory_order_acq_rel) != 1)
    return;
  finish_ran_task(task, worker);
}

void Scheduler::run_body(Task* task, int worker, std::shared_ptr<const Failure>& cause) {
  // TaskDesc::runs_after_failed_copy: a copy it needed failed, and the body sees no data.
  const bool without_data =
      task->runs_after_failed_copy && task->staging_error().load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    AccessRecord& access = task->accesses[i];
    access.data = without_data ? nullptr : access.handle->data();
    access.layout = access.handle->layout();
    // Overwriting everything makes data left unusable by a failure valid again.
    if (overwrites(access.mode)) access.handle->clear_poison(task->progress(i).required_version);
  }
  Task* enclosing = this_thread_task;
  this_thread_task = task;
  const bool timed = trace_.enabled() || devices_ || task_statistics_;
  const auto start = timed ? TraceRecorder::Clock::now() : TraceRecorder::Clock::time_point();
  try {
    // A reduction's identity is a user's function too: what it throws fails the task.
    if (task->add_count != 0) reductions_.prepare_host_partials(task);
    task->invoke(task->closure, task->accesses);
  } catch (...) {
    cause = record_failure(*task, std::current_exception());
  }
  if (timed) {
    const auto end = TraceRecorder::Clock::now();
    if (trace_.enabled()) trace_.record(worker, task->name, start, end);
    const double seconds = std::chrono::duration<double>(end - start).count();
    if (devices_ && !cause) devices_->cpu_task_ran(*task, seconds);
    if (task_statistics_ && !cause)
      task_statistics_->record(worker, task->type_name, DeviceKind::cpu, seconds,
                               devices_ ? task->bytes_moved : 0);
  }
  // Implicit sync: a task is finished only when its children are.
  help_until(worker, [task] { return task->children.load(std::memory_order_acquire) == 0; });
  this_thread_task = enclosing;
}

// --- Procedure: finish ----------------------------------------------------------------------

void Scheduler::finish_accesses(Task* task, int worker) {
  auto wake_one = [this, worker](Waiter* w) { wake(w, worker); };
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    const AccessRecord& access = task->accesses[i];
    // Before the waiters are woken: their placement reads it. Tasks run by devices leave -1.
    if (locality_ && modifies(access.mode)) access.handle->set_last_writer(worker);
    const AddRole role = task->progress(i).add_role;
    if (role == AddRole::renamed) reductions_.attach_partial(task, i);
    // Read first: once the access has ended, a handle the program destroyed may be retired
    // (and freed) by the program's thread at any moment.
    HandleHost* const owner = access.handle->owner();
    switch (access.handle->finish_access(needs_exclusive(access.mode) || role == AddRole::in_place,
                                         wake_one)) {
      case HandleState::Finished::more:
        break;
      case HandleState::Finished::drained:  // the last access of an instance renaming left behind
        drop_instance(access.handle);
        break;
      case HandleState::Finished::released:  // the last access of a scratch handle or a token
        owner->retire_released(access.handle);
        break;
    }
  }
}

void Scheduler::drop_instance(HandleState* instance) {
  if (instance->replicas()) {
    devices_->drop_instance(instance);  // it frees the device buffers too
  } else {
    delete instance;
  }
}

void Scheduler::finish_task(Task* task, int worker) {
  if (track_) track_->finished(*task, worker, devices_ ? task->node : 0);
  if (task->access_count != 0) finish_accesses(task, worker);
  release_task(task, worker);
}

void Scheduler::end_host_task(Task* task, int worker) {
  tracker_.host_access_ended(*task);
  finish_accesses(task, worker);
  destroy_task(task, worker);
}

// Destroyed before its parent hears of it: once the parent's count (or pending_) says so, the
// closure (and whatever it captured) is gone.
inline void Scheduler::release_task(Task* task, int worker) {
  Task* const parent = task->parent;
  destroy_task(task, worker);
  if (parent) {
    if (parent->children.fetch_sub(1, std::memory_order_acq_rel) == 1 && parent == &root_)
      notify_waiters(root_.children);
  }
  if (!counted_in_pending(parent)) return;
  if (worker >= 0) {
    ++worker_locals_[worker].finished;
  } else {
    subtract_finished(1);
  }
}

inline void Scheduler::destroy_task(Task* task, int worker) {
  if (task->destroy) task->destroy(task->closure);
  if (devices_) delete_staging_error(*task);
  task->~Task();
  task_pool_.release(task, worker);
}

void Scheduler::count_finished(int worker) {
  std::int64_t& finished = worker_locals_[worker].finished;
  if (finished == 0) return;
  subtract_finished(finished);
  finished = 0;
}

// The submitting threads' counts are read after pending_: a task whose end pending_ shows was
// taken from a queue after its count was written, so the sum never misses the submission of a
// task whose end it includes, and reaches zero only when every task counted has finished.
void Scheduler::subtract_finished(std::int64_t finished) {
  const std::int64_t left = pending_.fetch_sub(finished, std::memory_order_acq_rel) - finished;
  if (left <= 0 && left + submitted_by_threads() == 0) notify_waiters(pending_);
}

std::int64_t Scheduler::submitted_by_threads() const {
  std::int64_t sum = 0;
  for (const SubmittedCount& submitted : submitted_)
    sum += submitted.count.load(std::memory_order_acquire);
  return sum;
}

std::int64_t Scheduler::pending() const {
  const std::int64_t counted = pending_.load(std::memory_order_acquire);
  return counted + submitted_by_threads();
}

void Scheduler::delete_staging_error(Task& task) {
  delete task.staging_error().load(std::memory_order_relaxed);
}

// --- Procedure: detach ----------------------------------------------------------------------

Scheduler* Scheduler::current_scheduler() { return this_thread_scheduler; }

Task* Scheduler::running_task() { return this_thread_scheduler ? this_thread_task : nullptr; }

// The first hold also stands for the body, released by run_and_finish when it returns; no other
// thread can touch a count of 0 (nobody holds a Completion of the task yet).
void Scheduler::hold_finish(Task* task) {
  const std::uint8_t holds = task->finish_holds.load(std::memory_order_relaxed);
  if (holds == 0) {
    task->finish_holds.store(2, std::memory_order_relaxed);
    return;
  }
  if (holds == UINT8_MAX)
    throw std::logic_error("versa::detach(): task '" + std::string(task->name) +
                           "' holds 254 Completions already");
  task->finish_holds.fetch_add(1, std::memory_order_relaxed);
}

void Scheduler::release_finish(Task* task, std::exception_ptr error) {
  // Counted until this thread leaves the scheduler: the finish of the last task may end the
  // program's wait, after which the runtime may go (wait_for_pending waits for the count).
  releases_under_way_.fetch_add(1, std::memory_order_seq_cst);
  if (error) {
    poison_outputs(task, record_failure(*task, error));
  }
  // Acquire-release: the finish (on whichever thread releases last) sees what the body and the
  // asynchronous operation wrote.
  if (task->finish_holds.fetch_sub(1, std::memory_order_acq_rel) == 1)
    finish_task(task, current_worker());
  releases_under_way_.fetch_sub(1, std::memory_order_release);  // the last touch of `this`
}

}  // namespace versa::detail
