#include "core/scheduler.hpp"

#include <chrono>
#include <functional>
#include <new>
#include <stdexcept>
#include <thread>
#include <utility>

#include "base/failure.hpp"
#include "base/names.hpp"
#include "base/spin_lock.hpp"
#include "core/device_dispatch.hpp"

namespace versa::detail {

namespace {
// The task running on this thread (for spawn/sync); null outside tasks.
thread_local Task* this_thread_task = nullptr;
// The scheduler whose workers (or caller's slot) this thread serves, for versa::detach(); set
// once per worker thread, so that running a body costs nothing more.
thread_local Scheduler* this_thread_scheduler = nullptr;

// Commutes (and exclusive user-defined modes), and adds that could not be renamed, run holding
// their handle's exclusive flag.
bool wants_flag(const Task& task, std::uint32_t i) {
  return needs_exclusive(task.accesses[i].mode) || task.progress(i).add_role == AddRole::needs_flag;
}
// Storage for a closure too large for the task's inline bytes.
[[gnu::noinline]] void* heap_closure(Task& task, const TaskDesc& desc) {
  task.heap_closure.reset(new std::byte[desc.closure_size + desc.closure_align]);
  void* p = task.heap_closure.get();
  std::size_t space = desc.closure_size + desc.closure_align;
  return std::align(desc.closure_align, desc.closure_size, p, space);
}

// Moves the submitted closure into the task: in line when it fits, else on the heap.
inline void move_closure(Task& task, const TaskDesc& desc) {
  const bool fits = desc.closure_size <= Task::inline_closure_bytes &&
                    desc.closure_align <= alignof(std::max_align_t);
  task.closure = fits ? task.inline_closure : heap_closure(task, desc);
  desc.move(task.closure, desc.closure);
}
void mark_flags_taken(Task* task) {
  for (std::uint32_t i = 0; i < task->access_count; ++i)
    if (task->progress(i).add_role == AddRole::needs_flag)
      task->progress(i).add_role = AddRole::in_place;
}
}  // namespace

Scheduler::Scheduler(int workers, TaskPool& pool, TraceRecorder& trace, FailureLog& failures,
                     ReductionEngine& reductions, WriteRenaming& renaming, TaskTracker& tracker,
                     const char* flush_name, bool caller_slot, std::size_t submission_window,
                     bool locality)
    : task_pool_(pool),
      trace_(trace),
      failures_(failures),
      reductions_(reductions),
      renaming_(renaming),
      tracker_(tracker),
      track_(tracker.tracking() ? &tracker : nullptr),
      flush_name_(flush_name),
      caller_slot_(caller_slot),
      submission_window_(caller_slot ? submission_window : 0),
      locality_(locality),
      worker_locals_(workers) {
  root_.name = "main";
}

// Pinning only when the workers fill the cores the process may use: fewer workers than that
// (one per process, or a few) would all be pinned to the first cores, where the workers of other
// processes sharing the machine would be pinned too (two runtimes of one worker each ran
// nqueens at less than half speed, both on core 0), while the scheduler of the system spreads
// unpinned threads.
void Scheduler::start(bool pin, const Topology& topology) {
  plain_tasks_ = !devices_ && !track_ && !trace_.enabled() && !task_statistics_;
  defer_ = defer_requested_ && !devices_ && !track_;
  pin = pin && workers() >= topology.usable_cores();
  pool_ = std::make_unique<WorkerPool>(workers() - (caller_slot_ ? 1 : 0), pin, topology, *this,
                                       caller_slot_);
}

// Joined before the pointer is cleared: a worker flushing its count as it goes idle may still
// reach the pool through it (notify_waiters).
void Scheduler::stop() {
  if (!pool_) return;
  pool_->stop();
  pool_.reset();
}

Task* Scheduler::parent_for(bool is_child, int worker) const {
  if (!is_child) return nullptr;
  if (worker >= 0) return this_thread_task ? this_thread_task : const_cast<Task*>(&root_);
  Task* on_device = device_body_task();
  return on_device ? on_device : const_cast<Task*>(&root_);
}

// --- Procedure: submit ----------------------------------------------------------------------

inline Task* Scheduler::construct_task(const char* name, int priority, InvokeFn invoke,
                                       DestroyFn destroy, int worker) {
  // Default-initialisation: the inline storage is not zeroed (it is written before use).
  Task* task = new (task_pool_.allocate(worker)) Task;
  task->name = name;
  task->priority = priority;
  task->invoke = invoke;
  task->destroy = destroy;
  return task;
}

inline Task* Scheduler::construct_task(const TaskDesc& desc, int worker) {
  return construct_task(desc.name, desc.priority, desc.invoke, desc.destroy, worker);
}

Task* Scheduler::create_task(const TaskDesc& desc, int worker) {
  Task* task = construct_task(desc, worker);
  if (devices_) devices_->adopt(*task, &desc);
  if (task_statistics_) task->type_name = desc.type_name;
  task->set_accesses(desc.accesses, desc.access_count);
  move_closure(*task, desc);
  return task;
}

// Registers each access in program order; an access that closes a run of adds gets the flush
// registered just before it. An access that overwrites its handle may be renamed (a task's, not
// a host access's: acquire shows the user's own memory): it then uses a fresh instance of the
// handle from here on.
void Scheduler::register_accesses(Task* task, int worker, bool may_rename) {
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    AccessRecord& access = task->accesses[i];
    const Registration registration =
        may_rename && overwrites(access.mode)
            ? renaming_.register_overwrite(*access.handle, access.mode)
            : access.handle->register_access(access.mode);
    if (registration.flush_on)
      submit_flush(registration.flush_on, registration.flush_required, worker);
    if (registration.drained) drop_instance(registration.drained);
    if (registration.instance != access.handle && registration.required == 0)
      tracker_.handle_renamed(registration.instance->id(), access.handle->id());
    access.handle = registration.instance;
    access.layout = access.handle->layout();
    task->progress(i).required_version = registration.required;
    if (needs_exclusive(access.mode)) ++task->exclusive_count;
    if (access.mode == AccessMode::add) ++task->add_count;
  }
}

inline void Scheduler::count_submitted(Task* task, Task* parent, int submitter) {
  if (counted_in_pending(parent)) {
    if (submitter >= 0) {
      // Only this thread writes its count: no locked instruction, which would wait for the
      // stores into the new task to drain.
      std::atomic<std::int64_t>& count = submitted_[submitter].count;
      count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    } else {
      pending_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (parent) {
    task->parent = parent;
    parent->children.fetch_add(1, std::memory_order_relaxed);
  }
}

void Scheduler::submit_general(const TaskDesc& desc, Task* parent, int worker) {
  Task* task = create_task(desc, worker);
  if (defer_ && worker < 0 && desc.access_count != 0) {
    // A prioritised task is registered at once, after the tasks queued before it: idle
    // workers, who register the queued ones, are not idle while tasks of lower priority run
    // (writers at priority 1 behind a hundred readers waited for all of them).
    if (desc.priority > 0) {
      register_deferred_tasks();
    } else if (const int submitter = pool_->submitter(); submitter >= 0) {
      // Counted before it is queued: a worker may register, run and finish it at once.
      count_submitted(task, parent, submitter);
      deferred_.push(submitter, task);
      pool_->notify_work();
      return;
    }
  }
  if (desc.access_count != 0) register_accesses(task, worker, true);
  if (devices_) devices_->size(*task, desc);
  // Count the task before it can possibly finish: once parked, another thread may run it.
  count_submitted(task, parent, worker >= 0 ? -1 : pool_->submitter());
  if (track_) track_->submitted(*task);
  // A task without accesses waits for nothing (a spawned computation: the common fine-grained
  // case).
  if (desc.access_count == 0 || try_make_ready(task, worker)) schedule(task, worker);
  // Not for a child of a task whose body runs on a device's thread, which must not take up CPU
  // tasks while its device waits for it.
  if (worker < 0 && submission_window_ != 0 && counted_in_pending(parent)) bound_backlog();
}

void Scheduler::submit_plain(const TaskDesc& desc, Task* parent, int worker) {
  Task* task = construct_task(desc, worker);
  move_closure(*task, desc);
  // No finish is under way on this thread (bodies submit, finishes do not), so no continuation
  // is due; and a task without inputs has no home worker.
  if (worker >= 0) {
    count_submitted(task, parent, -1);
    pool_->push_local(worker, task);
  } else {
    const int submitter = pool_->submitter();
    count_submitted(task, parent, submitter);
    pool_->push_external(submitter, task);
    // Checked here rather than in submit(): a second lookup of the submitter and a call cost a
    // submission of empty tasks 5-10%.
    if (submission_window_ != 0 && submitter >= 0 &&
        pool_->submitted_at_least(submitter, submission_window_))
      run_backlog(submitter);
  }
}

Task* Scheduler::start_plain_child(const char* name, InvokeFn invoke, DestroyFn destroy) {
  Task* const parent = this_thread_task;
  if (!plain_tasks_ || !parent) return nullptr;
  const int worker = current_worker();
  if (worker < 0) return nullptr;  // a task of another runtime spawns into this one
  Task* task = construct_task(name, 0, invoke, destroy, worker);
  task->closure = task->inline_closure;
  task->parent = parent;
  return task;
}

void Scheduler::submit_plain_child(Task* task) {
  task->parent->children.fetch_add(1, std::memory_order_relaxed);
  pool_->push_local(current_worker(), task);
}

void Scheduler::submit_flush(HandleState* handle, std::uint64_t required, int worker) {
  Task* task = new (task_pool_.allocate(worker)) Task;
  task->name = flush_name_;
  task->reduction_flush = true;
  if (devices_) devices_->adopt(*task, nullptr);
  task->set_accesses(nullptr, 1);
  AccessRecord& access = task->accesses[0];
  access.handle = handle;
  access.layout = handle->layout();
  task->progress(0).required_version = required;
  access.mode = AccessMode::write;  // brings the data home and excludes every other access
  pending_.fetch_add(1, std::memory_order_relaxed);
  if (track_) track_->submitted(*task);
  if (try_make_ready(task, worker)) schedule(task, worker);
}

// A task whose work the calling thread does itself once its accesses are ready (a host access,
// bringing renamed data home): `count` accesses, filled in by the caller.
Task* Scheduler::create_host_task(const char* name, std::uint32_t count, int worker) {
  Task* task = new (task_pool_.allocate(worker)) Task;
  task->name = name;
  task->host_access = true;
  if (devices_) devices_->adopt(*task, nullptr);
  task->set_accesses(nullptr, count);
  task->add_count = 0;
  task->exclusive_count = 0;
  return task;
}

// Schedules a registered host task and returns when it may proceed. A worker (a handle
// destroyed inside a task) runs other tasks meanwhile; another thread sleeps.
void Scheduler::wait_host_task(Task* task, int worker) {
  tracker_.host_access_submitted(*task);
  if (try_make_ready(task, worker)) schedule(task, worker);
  auto ready = [task] { return task->host_ready.load(std::memory_order_acquire); };
  if (worker >= 0) {
    help_until(worker, ready);
  } else if (Task* body = device_body_task()) {
    wait_in_device_body(*body, ready);  // a handle destroyed inside a device task's body
  } else {
    while (!ready()) task->host_ready.wait(false);
  }
}

void Scheduler::end_host_task(Task* task, int worker) {
  tracker_.host_access_ended(*task);
  finish_accesses(task, worker);
  destroy_task(task, worker);
}

Task* Scheduler::submit_host_access(const AccessRecord& record) {
  Task* task = create_host_task("host acquire", 1, -1);
  AccessRecord& access = task->accesses[0];
  access = record;
  register_accesses(task, -1, false);
  access.handle->host_view_opened();
  // The main program's additions go straight into the data, holding the exclusive flag.
  if (access.mode == AccessMode::add) task->progress(0).add_role = AddRole::needs_flag;
  task->add_count = 0;
  task->exclusive_count = needs_exclusive(access.mode) || access.mode == AccessMode::add ? 1 : 0;
  wait_host_task(task, -1);
  return task;
}

void Scheduler::end_host_access(Task* ticket) {
  ticket->accesses[0].handle->host_view_closed();  // before the finish, which may end the handle
  end_host_task(ticket, -1);
}

// Excludes every other access of the handle's newest instance and of the root (the user's
// memory) while the data is copied home; the root is the newest instance from then on. In a
// runtime with devices, both halves are staged on the host: the instance's data is copied
// there, the root's host copy is overwritten (write_only) and its device copies invalidated.
void Scheduler::bring_home(HandleState& root) {
  register_deferred_tasks();
  HandleState* instance;
  std::uint64_t instance_required;
  std::uint64_t root_required;
  Registration closing{};
  if (!root.register_homecoming(instance, instance_required, root_required, closing)) return;
  const int worker = current_worker();
  if (closing.flush_on) submit_flush(closing.flush_on, closing.flush_required, worker);
  Task* task = create_host_task("bring home", 2, worker);
  task->accesses[0] = {instance, nullptr, instance->layout(), AccessMode::write};
  task->progress(0).required_version = instance_required;
  task->accesses[1] = {&root, nullptr, root.layout(), AccessMode::write_only};
  task->progress(1).required_version = root_required;
  wait_host_task(task, worker);
  if (const std::string* error =
          devices_ ? task->staging_error().load(std::memory_order_acquire) : nullptr) {
    // The data could not be copied out of the device: the user's memory does not hold it.
    auto failure = std::make_shared<Failure>();
    failure->task_name = task->name;
    failure->message = "bringing " + quoted_handle(root.name()) + " home: " + *error;
    failure->exception = std::make_exception_ptr(std::runtime_error(failure->message));
    failures_.record(failure);
    root.poison(failure, root_required);
  } else {
    WriteRenaming::copy_home(*instance, instance_required, root, root_required);
  }
  end_host_task(task, worker);  // the instance's last access: it is destroyed
}

void Scheduler::register_deferred(Task* task, int worker) {
  register_accesses(task, worker, true);
  if (try_make_ready(task, worker)) schedule(task, worker);
}

// --- Procedure: ready -----------------------------------------------------------------------

bool Scheduler::try_make_ready(Task* task, int worker) {
  const std::uint32_t n = task->access_count;
  for (std::uint32_t i = task->next_check; i < n; ++i) {
    HandleState* handle = task->accesses[i].handle;
    const std::uint64_t required = task->progress(i).required_version;
    if (handle->has_version(required)) continue;
    task->next_check = i;  // before parking: afterwards another thread owns the task
    task->waiter.owner = task;
    if (handle->park_until(&task->waiter, required)) return false;
  }
  task->next_check = n;
  // A flush has no CPU body: tasks with one decide this on the first cache line.
  if (!task->invoke && task->reduction_flush) {
    PartialSlots* slots = task->accesses[0].handle->partials();
    if (slots && !slots->empty()) return true;
    finish_task(task, worker);  // every add ran in place: nothing to apply
    return false;
  }
  if (task->add_count != 0) reductions_.claim_add_accesses(task, worker);
  return task->exclusive_count == 0 || take_exclusive_flags(task, worker);
}

// Taking every exclusive flag a task needs or none (and parking at the first one that is busy)
// rules out deadlock between tasks that need several.
bool Scheduler::take_exclusive_flags(Task* task, int worker) {
  auto wake_one = [this, worker](Waiter* w) { wake(w, worker); };
  for (;;) {
    std::uint32_t taken = 0;
    HandleState* busy = nullptr;
    for (std::uint32_t i = 0; i < task->access_count; ++i) {
      const AccessRecord& access = task->accesses[i];
      if (!wants_flag(*task, i)) continue;
      task->waiter.owner = task;
      if (task->exclusive_count == 1) {
        if (!access.handle->take_exclusive_or_park(&task->waiter)) return false;
        mark_flags_taken(task);
        return true;
      }
      if (!access.handle->try_take_exclusive()) {
        busy = access.handle;
        break;
      }
      ++taken;
    }
    if (!busy) {
      mark_flags_taken(task);
      return true;
    }
    for (std::uint32_t i = 0; i < task->access_count && taken > 0; ++i) {
      if (!wants_flag(*task, i)) continue;
      task->accesses[i].handle->give_back_exclusive(wake_one);
      --taken;
    }
    if (!busy->take_exclusive_or_park(&task->waiter)) return false;
    busy->give_back_exclusive(wake_one);  // free again now: retry the whole set
  }
}

void Scheduler::wake(Waiter* waiter, int worker) {
  Task* task = static_cast<Task*>(waiter->owner);
  if (try_make_ready(task, worker)) schedule(task, worker);
}

void Scheduler::schedule(Task* task, int worker) {
  if (devices_) {
    devices_->place(task, worker);
  } else if (task->host_access) {
    release_host_access(task);
  } else {
    push_to_cpu(task, worker);
  }
}

void Scheduler::push_to_cpu(Task* task, int worker) {
  if (trace_.enabled()) trace_.ready_changed(worker, +1);
  if (worker >= 0) {
    WorkerLocal& local = worker_locals_[worker];
    if (local.finishing && !local.continuation && pool_->queued_locally(worker) == 0 &&
        !pool_->prioritised_submitted()) {
      local.continuation = task;
      return;
    }
    if (const int home = locality_ ? home_worker(*task) : -1; home >= 0 && home != worker) {
      pool_->push_to(home, task);
      return;
    }
    pool_->push_local(worker, task);
  } else if (const int home = locality_ ? home_worker(*task) : -1; home >= 0) {
    pool_->push_to(home, task);
  } else {
    pool_->push_external(task);
  }
}

int Scheduler::home_worker(const Task& task) const {
  const AccessRecord* largest = nullptr;
  std::size_t largest_bytes = 0;
  for (std::uint32_t i = 0; i < task.access_count; ++i) {
    const AccessRecord& access = task.accesses[i];
    if (!reads_contents(access.mode)) continue;
    const std::size_t bytes = access.handle->layout()->bytes();
    if (!largest || bytes > largest_bytes ||
        (bytes == largest_bytes && modifies(access.mode) && !modifies(largest->mode))) {
      largest = &access;
      largest_bytes = bytes;
    }
  }
  if (!largest) return -1;
  const int writer = largest->handle->last_writer();
  return caller_slot_ && writer == pool_->size() - 1 ? -1 : writer;
}

void Scheduler::release_host_access(Task* task) {
  task->host_ready.store(true, std::memory_order_release);
  task->host_ready.notify_all();
}

void Scheduler::worker_started(int) { this_thread_scheduler = this; }

// Checked by a worker before it sleeps, after it counted itself among the sleepers: work that
// was queued for pulling after its last pull_work, by a thread that saw no sleeper, is seen
// here (a task pooled for placement once waited with every worker asleep).
bool Scheduler::work_to_pull() const {
  return (defer_ && deferred_.any()) || (devices_ && devices_->cpu_work_pooled());
}

// A worker that found nothing to run registers a few deferred tasks (as DDAST's idle threads
// turn runtime managers), then runs what they made ready; a batch at a time, so that it goes
// back to running tasks as soon as some are ready.
bool Scheduler::pull_work(int worker) {
  constexpr std::size_t deferred_batch = 16;
  if (defer_ &&
      deferred_.register_some([this, worker](Task* task) { register_deferred(task, worker); },
                              deferred_batch) != 0)
    return true;
  return devices_ && devices_->pull_for_cpu(worker);
}

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
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    AccessRecord& access = task->accesses[i];
    access.data = access.handle->data();
    access.layout = access.handle->layout();
    // Overwriting everything makes data left unusable by a failure valid again.
    if (overwrites(access.mode)) access.handle->clear_poison();
  }
  if (task->add_count != 0) reductions_.prepare_host_partials(task);
  Task* enclosing = this_thread_task;
  this_thread_task = task;
  const bool timed = trace_.enabled() || devices_ || task_statistics_;
  const auto start = timed ? TraceRecorder::Clock::now() : TraceRecorder::Clock::time_point();
  try {
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

std::shared_ptr<const Failure> Scheduler::record_failure(const Task& task,
                                                         std::exception_ptr error) {
  auto failure = std::make_shared<Failure>();
  failure->task_name = task.name;
  failure->exception = error;
  failure->message = describe(error);
  failures_.record(failure);
  return failure;
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
    // The last access of an instance that renaming left behind ends it.
    if (access.handle->finish_access(needs_exclusive(access.mode) || role == AddRole::in_place,
                                     wake_one))
      drop_instance(access.handle);
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

// --- Procedure: fail ------------------------------------------------------------------------

std::shared_ptr<const Failure> Scheduler::inherited_failure(Task* task) {
  std::shared_ptr<const Failure> cause;
  for (std::uint32_t i = 0; i < task->access_count && !cause; ++i) {
    const AccessRecord& access = task->accesses[i];
    if (reads_contents(access.mode))
      cause = access.handle->poison_before(task->progress(i).required_version);
  }
  if (cause) failures_.cancelled_by(cause);
  return cause;
}

void Scheduler::poison_outputs(Task* task, const std::shared_ptr<const Failure>& cause) {
  if (devices_) devices_->forget_exploration(*task);
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    const AccessRecord& access = task->accesses[i];
    if (modifies(access.mode)) access.handle->poison(cause, task->progress(i).required_version);
  }
}

bool Scheduler::cancel_if_poisoned(Task& task) {
  if (task.reduction_flush) return false;  // it discards the partials itself
  std::shared_ptr<const Failure> cause = inherited_failure(&task);
  if (!cause) return false;
  poison_outputs(&task, cause);
  finish_task(&task, -1);
  return true;
}

void Scheduler::fail_task(Task* task, std::exception_ptr error, std::string message, int worker) {
  auto failure = std::make_shared<Failure>();
  failure->task_name = task->name;
  failure->exception = std::move(error);
  failure->message = std::move(message);
  failures_.record(failure);
  poison_outputs(task, failure);
  finish_task(task, worker);
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
  if (error) {
    poison_outputs(task, record_failure(*task, error));
  }
  // Acquire-release: the finish (on whichever thread releases last) sees what the body and the
  // asynchronous operation wrote.
  if (task->finish_holds.fetch_sub(1, std::memory_order_acq_rel) == 1)
    finish_task(task, current_worker());
}

// --- Procedure: wait ------------------------------------------------------------------------

// A worker never blocks (the task it waits for may be queued behind it, on its own deque): it
// runs other ready tasks, and yields the core when there are none.
template <class Done>
void Scheduler::help_until(int worker, Done&& done) {
  while (!done()) {
    if (!pool_->run_one(worker)) std::this_thread::yield();
  }
}

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

void Scheduler::bound_backlog() {
  const int submitter = pool_->submitter();
  if (submitter >= 0 && pool_->submitted_at_least(submitter, submission_window_))
    run_backlog(submitter);
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
