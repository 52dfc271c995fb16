// Scheduler (core/scheduler.hpp): the work the calling thread does itself once a task's
// accesses are ready: a host access (Runtime::acquire) and bringing a renamed handle's data home
// to the user's memory. Both are task records registered like any task, which the thread waits
// for instead of a worker running them.
#include <stdexcept>

#include "base/failure.hpp"
#include "base/names.hpp"
#include "core/device_dispatch.hpp"
#include "core/scheduler.hpp"
#include "core/scheduler_thread.hpp"

namespace versa::detail {

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

Task* Scheduler::submit_host_access(const AccessRecord& record, std::uint64_t* registered_then) {
  Task* task = create_host_task("host acquire", 1, -1);
  AccessRecord& access = task->accesses[0];
  access = record;
  register_accesses(task, -1, false);
  if (registered_then) *registered_then = access.handle->registered_accesses();
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

}  // namespace versa::detail
