#include "data/reduction_engine.hpp"

#include <stdexcept>

#include "base/names.hpp"

namespace versa::detail {

namespace {
std::size_t elements(const Layout& layout) { return layout.rows * layout.cols; }
}  // namespace

void ReductionEngine::claim_add_accesses(Task* task, int worker) {
  bool took_flag = false;
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    const AccessRecord& access = task->accesses[i];
    AddRole& role = task->progress(i).add_role;
    if (access.mode != AccessMode::add || role != AddRole::undecided) continue;
    HandleState& handle = *access.handle;
    const std::size_t bytes = handle.layout()->bytes();
    if (bytes != 0 && handle.try_take_exclusive()) {
      role = AddRole::in_place;
      took_flag = true;
    } else if (bytes != 0 && partials_.try_reserve(bytes)) {
      role = AddRole::renamed;
    } else {
      role = AddRole::needs_flag;
      ++task->exclusive_count;
    }
  }
  if (task->exclusive_count == 0 || !took_flag) return;
  // The task will wait for other flags: it must not hold any meanwhile (all or none), so the
  // ones just taken join the set it takes at once.
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    AddRole& role = task->progress(i).add_role;
    if (role != AddRole::in_place) continue;
    give_back_flag(*task->accesses[i].handle, worker);
    role = AddRole::needs_flag;
    ++task->exclusive_count;
  }
}

void ReductionEngine::rename_remote_adds(Task* task, int worker) {
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    AddRole& role = task->progress(i).add_role;
    if (role != AddRole::in_place) continue;
    HandleState& handle = *task->accesses[i].handle;
    ReplicaSet* replicas = handle.replicas();
    if (!replicas) continue;
    {
      MutexLock guard(replicas->mutex());
      if (is_valid(replicas->at(task->node).state)) continue;
    }
    if (!partials_.try_reserve(handle.layout()->bytes())) continue;
    role = AddRole::renamed;
    give_back_flag(handle, worker);
  }
}

void ReductionEngine::prepare_host_partials(Task* task) {
  // None holds the user's memory: where an identity throws, the task fails, and those not yet
  // prepared are attached as never given a buffer (attach_partial).
  for (std::uint32_t i = 0; i < task->access_count; ++i)
    if (task->progress(i).add_role == AddRole::renamed) task->accesses[i].data = nullptr;
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    if (task->progress(i).add_role != AddRole::renamed) continue;
    AccessRecord& access = task->accesses[i];
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

void ReductionEngine::attach_partial(Task* task, std::uint32_t index) {
  AccessRecord& access = task->accesses[index];
  HandleState& handle = *access.handle;
  const std::size_t bytes = handle.layout()->bytes();
  void* mine = access.data;
  access.data = nullptr;
  if (!mine) {  // cancelled before it had a buffer
    partials_.release(bytes);
    return;
  }
  int node = devices_ ? task->node : 0;
  const ReductionOps& ops = *handle.reduction();
  PartialSlots& slots = *handle.partials();
  if (node != 0 && !devices_->may_keep_partial(node)) {
    // Partials kept on a device cannot be evicted: past a share of its memory they go home at
    // once, so that replicas always have room.
    void* home = partials_.take(bytes);
    const std::string error = devices_->copy_partial_home(node, home, mine, bytes);
    devices_->free_partial(node, mine, bytes);
    if (!error.empty()) {
      partials_.give(home, bytes);
      partials_.release(bytes);
      poison(task, index, error);
      return;
    }
    mine = home;
    node = 0;
  }
  // Host partials go back to the pool as they are; a device's are merged when they meet.
  bool first;
  while (void* other = slots.put_or_take(node, mine, first)) {
    const std::string error =
        devices_->merge_partials(node, ops, mine, other, elements(*handle.layout()));
    drop_device_partial(node, other, bytes);
    if (!error.empty()) poison(task, index, "merging partials: " + error);
  }
  if (first) partials_.list(&handle);
}

void ReductionEngine::drop_device_partial(int node, void* partial, std::size_t bytes) {
  devices_->free_partial(node, partial, bytes);
  partials_.release(bytes);
}

void ReductionEngine::poison(Task* task, std::uint32_t index, const std::string& error) {
  HandleState& handle = *task->accesses[index].handle;
  auto failure = std::make_shared<Failure>();
  failure->task_name = task->name;
  failure->message = "reduction into " + quoted_handle(handle.name()) + ": " + error;
  failure->exception = std::make_exception_ptr(std::runtime_error(failure->message));
  failures_.record(failure);
  handle.poison(std::move(failure), task->progress(index).required_version);
}

namespace {
// The closure of a flush on a device: the partial taken out of its slot, for freeing once the
// merge has completed (device_flush_ended), and the version the flush applies.
struct DeviceFlush {
  void* partial;
  std::uint64_t required_version;
};

// The implementations of a flush on a device: the partial is merged into the data's replica
// there.
void* take_device_partial(void* closure, const AccessRecord& access) {
  DeviceFlush& flush = *static_cast<DeviceFlush*>(closure);
  for (void* p : access.handle->partials()->take_all().device)
    if (p) flush.partial = p;
  // A failed add: nothing to apply.
  return access.handle->poison_before(flush.required_version) ? nullptr : flush.partial;
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

int ReductionEngine::flush_node(Task& task) {
  HandleState& handle = *task.accesses[0].handle;
  const ReductionOps& ops = *handle.reduction();
  ReplicaSet* replicas = handle.replicas();
  if (!replicas || ops.apply) return 0;  // a separate apply has no device form
  int owner = 0;
  {
    MutexLock guard(replicas->mutex());
    for (int node = 1; node < replicas->nodes(); ++node)
      if (replicas->at(node).state == ReplicaState::owned) owner = node;
  }
  if (owner == 0 || !handle.partials()->only_on(owner)) return 0;
  if (!devices_->can_apply_on(owner, ops)) return 0;
  static_assert(sizeof(DeviceFlush) <= Task::inline_closure_bytes);
  task.closure = new (task.inline_closure) DeviceFlush{nullptr, task.progress(0).required_version};
  task.invoke_emulated = &flush_on_emulated;
  task.invoke_cuda = &flush_on_gpu;
  return owner;
}

void ReductionEngine::device_flush_ended(Task& task, int node, const std::string& error) {
  HandleState& handle = *task.accesses[0].handle;
  partials_.unlist(&handle);
  const std::size_t bytes = handle.layout()->bytes();
  if (void* partial = static_cast<DeviceFlush*>(task.closure)->partial) {
    drop_device_partial(node, partial, bytes);
  } else if (!handle.partials()->empty()) {
    // It never ran (its staging failed): the host discards them.
    for (void* p : handle.partials()->take_all().device)
      if (p) drop_device_partial(node, p, bytes);
  }
  if (!error.empty())
    poison(&task, 0, "applying the partials on " + devices_->node_name(node) + ": " + error);
}

void ReductionEngine::apply_partials(Task* task) {
  HandleState& handle = *task->accesses[0].handle;
  const ReductionOps& ops = *handle.reduction();
  const Layout& layout = *handle.layout();
  const std::size_t bytes = layout.bytes();
  const std::size_t count = elements(layout);
  PartialSlots::Taken partials = handle.partials()->take_all();
  partials_.unlist(&handle);
  // The flush excludes every other access: the poison is stable here.
  std::shared_ptr<const Failure> cause = handle.poison_before(task->progress(0).required_version);
  std::string error;
  // A merge that throws (a user's operator) ends the merging, not the giving back.
  auto merge = [&](void* into, const void* from) {
    if (cause || !error.empty()) return;
    try {
      ops.merge(into, from, count);
    } catch (...) {
      error = describe(std::current_exception());
    }
  };
  void* merged = partials.host.empty() ? nullptr : partials.host[0];
  const bool merged_counted = merged != nullptr;
  try {
    for (std::size_t i = 1; i < partials.host.size(); ++i) {
      merge(merged, partials.host[i]);
      partials_.give(partials.host[i], bytes);
      partials_.release(bytes);
    }
    // Each device's partial comes home once and is merged there.
    for (std::size_t node = 1; node < partials.device.size(); ++node) {
      void* partial = partials.device[node];
      if (!partial) continue;
      if (!cause && error.empty()) {
        void* staged = partials_.take(bytes);
        error = devices_->copy_partial_home(static_cast<int>(node), staged, partial, bytes);
        if (!error.empty() || merged) {
          merge(merged, staged);
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
  if (!error.empty()) poison(task, 0, "applying the partials: " + error);
}

void ReductionEngine::discard_partials(Task& flush) {
  HandleState& handle = *flush.accesses[0].handle;
  PartialSlots::Taken partials = handle.partials()->take_all();
  partials_.unlist(&handle);
  const std::size_t bytes = handle.layout()->bytes();
  for (void* partial : partials.host) {
    partials_.give(partial, bytes);
    partials_.release(bytes);
  }
  for (std::size_t node = 1; node < partials.device.size(); ++node)
    if (void* partial = partials.device[node])
      drop_device_partial(static_cast<int>(node), partial, bytes);
}

std::size_t ReductionEngine::memory_bytes() const {
  return partials_.host_bytes() + (devices_ ? devices_->partial_bytes_on_devices() : 0);
}

void ReductionEngine::give_back_flag(HandleState& handle, int worker) {
  handle.give_back_exclusive([this, worker](Waiter* w) { waker_.wake(w, worker); });
}

std::vector<std::pair<HandleState*, std::uint64_t>> ReductionEngine::close_open_runs() {
  std::vector<std::pair<HandleState*, std::uint64_t>> closed;
  for (HandleState* handle : partials_.listed()) {
    std::uint64_t required;
    if (handle->close_add_run(required)) closed.emplace_back(handle, required);
  }
  return closed;
}

}  // namespace versa::detail
