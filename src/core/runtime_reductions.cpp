// Reductions in the task life cycle (DESIGN section 4): renaming add accesses into partial
// buffers, merging partials per node as their tasks finish, and the flush that applies them to
// the handle's data before the next access of another mode.
#include <stdexcept>
#include <thread>

#include "base/names.hpp"
#include "core/runtime_core.hpp"

namespace versa::detail {

namespace {
std::size_t elements(const Layout& layout) { return layout.rows * layout.cols; }
}  // namespace

void RuntimeCore::check_reduction(const TaskDesc& desc, const AccessRecord& access) const {
  HandleState* handle = access.handle;
  if (handle->layout()->bytes() == 0) return;  // a token: adds to it just exclude each other
  const std::string task = "task '" + std::string(desc.name) + "'";
  const ReductionOps* ops = handle->reduction();
  if (!ops) {
    if (!desc.reduction)
      throw std::invalid_argument(
          task + " adds into " + quoted_handle(handle->name()) +
          ", which has no reduction operator: bind one with set_reduction() on the handle or "
          "reduction() on the task type (versa::sum<T>() for sums)");
    const std::string refused = handle->bind_reduction(desc.reduction, nullptr, false);
    if (!refused.empty() && handle->reduction() != desc.reduction)
      throw std::invalid_argument(task + " adds into " + quoted_handle(handle->name()) +
                                  " with operator '" + desc.reduction->name + "', but " + refused);
    ops = desc.reduction;
  } else if (desc.reduction && desc.reduction != ops) {
    throw std::invalid_argument(task + " adds into " + quoted_handle(handle->name()) +
                                " with operator '" + desc.reduction->name +
                                "', but the handle is reduced with '" + ops->name + "'");
  }
  if (ops->element_size != handle->layout()->element_size)
    throw std::invalid_argument(
        task + " adds into " + quoted_handle(handle->name()) + ", whose elements have " +
        std::to_string(handle->layout()->element_size) + " bytes, with operator '" + ops->name +
        "' for elements of " + std::to_string(ops->element_size) + " bytes");
  if (desc.invoke_cuda && desc.placement != Placement::cpu_only && !ops->runs_on_cuda()) {
    for (const auto& device : devices_)
      if (device->kind() == DeviceKind::cuda)
        throw std::invalid_argument(task + " may run on " + device->name() + " but the operator '" +
                                    ops->name + "' of " + quoted_handle(handle->name()) +
                                    " has no CUDA functions (cuda_identity and cuda_merge)");
  }
}

void RuntimeCore::submit_flush(HandleState* handle, std::uint64_t required, int worker) {
  Task* task = new (task_pool_.allocate(worker)) Task;
  task->name = flush_name_;
  task->reduction_flush = true;
  if (!devices_.empty()) {
    task->type_name = flush_name_;
    task->invoke_cuda = nullptr;
    task->invoke_emulated = nullptr;
    task->placement = Placement::cpu_only;
    prepare_for_devices(task);
  }
  task->access_count = 1;
  task->accesses = reinterpret_cast<AccessRecord*>(task->inline_records);
  AccessRecord& access = task->accesses[0];
  access = AccessRecord{};
  access.handle = handle;
  access.layout = handle->layout();
  access.required_version = required;
  access.mode = AccessMode::write;  // brings the data home and excludes every other access
  pending_.fetch_add(1, std::memory_order_relaxed);
  if (try_make_ready(task, worker)) schedule(task, worker);
}

void RuntimeCore::claim_add_accesses(Task* task, int worker) {
  bool took_flag = false;
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    AccessRecord& access = task->accesses[i];
    if (access.mode != AccessMode::add || access.add_role != AddRole::undecided) continue;
    HandleState& handle = *access.handle;
    const std::size_t bytes = handle.layout()->bytes();
    if (bytes != 0 && handle.try_take_exclusive()) {
      access.add_role = AddRole::in_place;
      took_flag = true;
    } else if (bytes != 0 && partials_.try_reserve(bytes)) {
      access.add_role = AddRole::renamed;
    } else {
      access.add_role = AddRole::needs_flag;
      ++task->exclusive_count;
    }
  }
  if (task->exclusive_count == 0 || !took_flag) return;
  // The task will wait for other flags: it must not hold any meanwhile (all or none), so the
  // ones just taken join the set it takes at once.
  auto wake_one = [this, worker](Waiter* w) { wake(w, worker); };
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    AccessRecord& access = task->accesses[i];
    if (access.add_role != AddRole::in_place) continue;
    access.handle->give_back_exclusive(wake_one);
    access.add_role = AddRole::needs_flag;
    ++task->exclusive_count;
  }
}

void RuntimeCore::rename_remote_adds(Task* task, int worker) {
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    AccessRecord& access = task->accesses[i];
    if (access.add_role != AddRole::in_place) continue;
    HandleState& handle = *access.handle;
    ReplicaSet* replicas = handle.replicas();
    if (!replicas) continue;
    {
      std::lock_guard<std::mutex> guard(replicas->mutex());
      if (is_valid(replicas->at(task->node).state)) continue;
    }
    if (!partials_.try_reserve(handle.layout()->bytes())) continue;
    access.add_role = AddRole::renamed;
    handle.give_back_exclusive([this, worker](Waiter* w) { wake(w, worker); });
  }
}

void RuntimeCore::prepare_host_partials(Task* task) {
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    AccessRecord& access = task->accesses[i];
    if (access.add_role != AddRole::renamed) continue;
    HandleState& handle = *access.handle;
    const std::size_t bytes = handle.layout()->bytes();
    access.layout = handle.packed_layout();
    // A partial put back by an earlier add of the run: add into it (no identity to write, no
    // merge later). Its bytes are counted already, so this task's reservation goes back.
    if (void* earlier = handle.partials()->take_host()) {
      access.data = earlier;
      partials_.release(bytes);
      continue;
    }
    access.data = partials_.take(bytes);
    handle.reduction()->identity(access.data, elements(*access.layout));
  }
}

void RuntimeCore::attach_partial(Task* task, AccessRecord& access) {
  HandleState& handle = *access.handle;
  const std::size_t bytes = handle.layout()->bytes();
  void* mine = access.data;
  access.data = nullptr;
  if (!mine) {  // cancelled before it had a buffer
    partials_.release(bytes);
    return;
  }
  int node = devices_.empty() ? 0 : task->node;
  const ReductionOps& ops = *handle.reduction();
  PartialSlots& slots = *handle.partials();
  if (node != 0 && !mover_->may_keep_partial(node)) {
    // Partials kept on a device cannot be evicted: past a share of its memory they go home at
    // once, so that replicas always have room.
    void* home = partials_.take(bytes);
    const std::string error = mover_->copy_partial_home(node, home, mine, bytes);
    mover_->free_partial(node, mine, bytes);
    if (!error.empty()) {
      partials_.give(home, bytes);
      partials_.release(bytes);
      poison_reduction(task, access, error);
      return;
    }
    mine = home;
    node = 0;
  }
  // Host partials go back to the pool as they are; a device's are merged when they meet.
  bool first;
  while (void* other = slots.put_or_take(node, mine, first)) {
    const std::string error =
        devices_[node - 1]->merge_partials(ops, mine, other, elements(*handle.layout()));
    drop_device_partial(node, other, bytes);
    if (!error.empty()) poison_reduction(task, access, "merging partials: " + error);
  }
  if (first) partials_.list(&handle);
}

void RuntimeCore::drop_device_partial(int node, void* partial, std::size_t bytes) {
  mover_->free_partial(node, partial, bytes);
  partials_.release(bytes);
}

void RuntimeCore::poison_reduction(Task* task, const AccessRecord& access,
                                   const std::string& error) {
  HandleState& handle = *access.handle;
  auto failure = std::make_shared<Failure>();
  failure->task_name = task->name;
  failure->message = "reduction into " + quoted_handle(handle.name()) + ": " + error;
  failure->exception = std::make_exception_ptr(std::runtime_error(failure->message));
  record_failure(failure);
  handle.poison(std::move(failure), access.required_version);
}

namespace {
// The implementations of a flush on a device: the partial is taken out of its slot and merged
// into the data's replica there. The closure holds the partial's address, for freeing once
// the merge has completed (device_flush_ended).
void* take_device_partial(void* closure, const AccessRecord& access) {
  void*& partial = *static_cast<void**>(closure);
  for (void* p : access.handle->partials()->take_all().device)
    if (p) partial = p;
  // A failed add: nothing to apply.
  return access.handle->poison_before(access.required_version) ? nullptr : partial;
}
void flush_on_emulated(void* closure, const AccessRecord* accesses) {
  if (void* partial = take_device_partial(closure, accesses[0]))
    accesses[0].handle->reduction()->merge(accesses[0].data, partial,
                                           elements(*accesses[0].layout));
}
void flush_on_gpu(void* closure, const AccessRecord* accesses, CudaContext& context) {
  if (void* partial = take_device_partial(closure, accesses[0]))
    accesses[0].handle->reduction()->cuda_merge(context, accesses[0].data, partial,
                                                elements(*accesses[0].layout));
}
}  // namespace

int RuntimeCore::flush_node(Task& task) {
  HandleState& handle = *task.accesses[0].handle;
  const ReductionOps& ops = *handle.reduction();
  ReplicaSet* replicas = handle.replicas();
  if (!replicas || ops.apply) return 0;  // a separate apply has no device form
  int owner = 0;
  {
    std::lock_guard<std::mutex> guard(replicas->mutex());
    for (int node = 1; node < replicas->nodes(); ++node)
      if (replicas->at(node).state == ReplicaState::owned) owner = node;
  }
  if (owner == 0 || !handle.partials()->only_on(owner)) return 0;
  if (devices_[owner - 1]->kind() == DeviceKind::cuda && !ops.runs_on_cuda()) return 0;
  task.closure = task.inline_closure;
  *static_cast<void**>(task.closure) = nullptr;
  task.invoke_emulated = &flush_on_emulated;
  task.invoke_cuda = &flush_on_gpu;
  return owner;
}

void RuntimeCore::device_flush_ended(Task& task, int node, const OperationResult& result) {
  HandleState& handle = *task.accesses[0].handle;
  partials_.unlist(&handle);
  const std::size_t bytes = handle.layout()->bytes();
  if (void* partial = *static_cast<void**>(task.closure)) {
    drop_device_partial(node, partial, bytes);
  } else if (!handle.partials()->empty()) {
    // It never ran (its staging failed): the host discards them.
    for (void* p : handle.partials()->take_all().device)
      if (p) drop_device_partial(node, p, bytes);
  }
  if (!result.error.empty())
    poison_reduction(
        &task, task.accesses[0],
        "applying the partials on " + devices_[node - 1]->name() + ": " + result.error);
  finish_task(&task, -1);
}

void RuntimeCore::apply_partials(Task* task) {
  HandleState& handle = *task->accesses[0].handle;
  const ReductionOps& ops = *handle.reduction();
  const Layout& layout = *handle.layout();
  const std::size_t bytes = layout.bytes();
  const std::size_t count = elements(layout);
  PartialSlots::Taken partials = handle.partials()->take_all();
  partials_.unlist(&handle);
  // The flush excludes every other access: the poison is stable here.
  std::shared_ptr<const Failure> cause = handle.poison_before(task->accesses[0].required_version);
  std::string error;
  void* merged = partials.host.empty() ? nullptr : partials.host[0];
  const bool merged_counted = merged != nullptr;
  try {
    for (std::size_t i = 1; i < partials.host.size(); ++i) {
      if (!cause && error.empty()) ops.merge(merged, partials.host[i], count);
      partials_.give(partials.host[i], bytes);
      partials_.release(bytes);
    }
    // Each device's partial comes home once and is merged there.
    for (std::size_t node = 1; node < partials.device.size(); ++node) {
      void* partial = partials.device[node];
      if (!partial) continue;
      if (!cause && error.empty()) {
        void* staged = partials_.take(bytes);
        error = mover_->copy_partial_home(static_cast<int>(node), staged, partial, bytes);
        if (!error.empty() || merged) {
          if (error.empty()) ops.merge(merged, staged, count);
          partials_.give(staged, bytes);
        } else {
          merged = staged;
        }
      }
      drop_device_partial(static_cast<int>(node), partial, bytes);
    }
    if (merged && !cause && error.empty()) {
      const auto& apply = ops.apply ? ops.apply : ops.merge;
      char* destination = static_cast<char*>(handle.data());
      const char* source = static_cast<const char*>(merged);
      // The handle may be a column of a larger matrix: apply column by column.
      for (std::size_t column = 0; column < layout.cols; ++column)
        apply(destination + column * layout.ld * layout.element_size,
              source + column * layout.rows * layout.element_size, layout.rows);
    }
  } catch (...) {
    error = describe(std::current_exception());
  }
  if (merged) {
    partials_.give(merged, bytes);
    if (merged_counted) partials_.release(bytes);
  }
  if (!error.empty()) poison_reduction(task, task->accesses[0], "applying the partials: " + error);
}

void RuntimeCore::flush_all_partials() {
  for (;;) {
    bool flushed = false;
    for (HandleState* handle : partials_.listed()) {
      std::uint64_t required;
      if (!handle->close_add_run(required)) continue;
      submit_flush(handle, required, -1);
      flushed = true;
    }
    if (!flushed) return;
    wait_for_pending();
  }
}

void RuntimeCore::complete_reductions(HandleState& handle) {
  std::uint64_t required;
  if (!handle.close_add_run(required)) return;
  const int worker = workers_->current_worker();
  submit_flush(&handle, required, worker);
  wait_for_version(handle, required + 1, worker);
}

// A worker helps with other tasks meanwhile: the flush may be queued behind them.
void RuntimeCore::wait_for_version(HandleState& handle, std::uint64_t version, int worker) {
  while (!handle.has_version_settled(version)) {
    if (worker < 0 || !workers_->run_one(worker)) std::this_thread::yield();
  }
}

void RuntimeCore::poison_outputs(Task* task, const std::shared_ptr<const Failure>& cause) {
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    const AccessRecord& access = task->accesses[i];
    if (modifies(access.mode)) access.handle->poison(cause, access.required_version);
  }
}

std::size_t RuntimeCore::reduction_memory_bytes() const {
  std::size_t bytes = partials_.host_bytes();
  if (mover_)
    for (int node = 1; node < mover_->nodes(); ++node)
      bytes += mover_->counters(node).partial_bytes.load(std::memory_order_relaxed);
  return bytes;
}

}  // namespace versa::detail
