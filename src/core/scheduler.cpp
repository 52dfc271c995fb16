// Scheduler (core/scheduler.hpp), the way in: construction, start and stop, submitting a task
// (creating it, registering its accesses, counting it), making it ready (the versions it needs,
// the exclusive flags) and handing it to a CPU worker or to the device dispatch. Running and
// finishing tasks is in task_execution.cpp, failures in task_failure.cpp, host accesses in
// host_access.cpp, the waits in waiting.cpp, bodies on devices' threads in device_bodies.cpp.
#include "core/scheduler.hpp"

#include <new>

#include "core/device_dispatch.hpp"
#include "core/scheduler_thread.hpp"

namespace versa::detail {

constinit thread_local Task* this_thread_task = nullptr;
constinit thread_local Scheduler* this_thread_scheduler = nullptr;

namespace {
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
  if (desc.access_count != 0) {
    // A body's task comes after the tasks queued for registration: a task without accesses is
    // queued at once, and may run before the tasks its program submitted before it are
    // registered. Every turn is taken, not only where any() sees tasks: a worker that has taken
    // a queue's tasks and not yet registered them leaves nothing any() sees.
    if (defer_ && worker >= 0) register_deferred_tasks();
    register_accesses(task, worker, true);
  }
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

void Scheduler::bound_backlog() {
  const int submitter = pool_->submitter();
  if (submitter >= 0 && pool_->submitted_at_least(submitter, submission_window_))
    run_backlog(submitter);
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

}  // namespace versa::detail
