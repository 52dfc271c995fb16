#include "core/device_dispatch.hpp"

#include <stdexcept>

#include "base/task.hpp"
#include "core/scheduler.hpp"
#include "device/device_registry.hpp"
#include "versa/work.hpp"

namespace versa::detail {

DeviceDispatch::DeviceDispatch(std::vector<std::unique_ptr<Device>> devices, int cpu_workers,
                               int tasks_per_stream, const std::vector<std::string>& serial_types,
                               const std::string& perf_model_file, Scheduler& scheduler,
                               ReductionEngine& reductions, TraceRecorder& trace)
    : scheduler_(scheduler),
      reductions_(reductions),
      trace_(trace),
      cpu_workers_(cpu_workers),
      devices_(std::move(devices)) {
  std::vector<DataMover::Node> mover_nodes(1);
  std::vector<PlacementPolicy::Node> placement_nodes(1);
  const std::vector<DeviceBackend> kinds = device_kinds();
  slots_.push_back(ImplementationSlot::cpu);
  for (auto& device : devices_) {
    const DeviceBackend& kind = kinds[static_cast<std::size_t>(device->kind())];
    slots_.push_back(kind.slot);
    placement_nodes.push_back({device->kind(), kind.slot, kind.name, device.get(), nullptr});
    Device* d = device.get();
    d->set_body_host(&scheduler);
    memories_.push_back(std::make_unique<NodeMemory>(
        d->memory_capacity(), [d](std::size_t bytes) { return d->allocate(bytes); },
        [d](void* pointer) { d->deallocate(pointer); }));
    mover_nodes.push_back({d, memories_.back().get(), nullptr});
    // One registration of host memory serves every device that needs it (all GPUs).
    if (!host_pins_ && d->pins_host_memory())
      host_pins_ = std::make_shared<HostPins>(
          [d](void* data, std::size_t bytes) { return d->register_host_memory(data, bytes); },
          [d](void* data) { d->unregister_host_memory(data); });
  }
  mover_ = std::make_unique<DataMover>(mover_nodes, *this, trace_);
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const int node = static_cast<int>(i) + 1;
    device_workers_.push_back(std::make_unique<DeviceWorker>(
        node, *devices_[i], *mover_, *this, tasks_per_stream, serial_types, trace_));
    mover_->attach_worker(node, device_workers_.back().get());
    placement_nodes[node].worker = device_workers_.back().get();
    trace_.add_device(devices_[i]->name(), devices_[i]->streams(), devices_[i]->priority_streams());
  }
  placement_ = std::make_unique<PlacementPolicy>(placement_nodes, cpu_workers, perf_model_);
  tasks_per_node_ = std::vector<std::atomic<std::uint64_t>>(devices_.size() + 1);
  kernel_seconds_ = std::vector<std::atomic<double>>(devices_.size());
  keep_perf_model(perf_model_file);
}

void DeviceDispatch::keep_perf_model(const std::string& configured) {
  const bool gpu = devices_of(DeviceKind::cuda) > 0;
  perf_model_file_ = PerfModel::file_to_keep(configured, gpu);
  if (perf_model_file_.empty()) return;
  perf_model_note_ = "performance model " + perf_model_file_;
  try {
    const int read = perf_model_.load(perf_model_file_);
    perf_model_note_ += read > 0 ? " (" + std::to_string(read) + " entries read)" : " (new)";
  } catch (const std::runtime_error& malformed) {
    // The machine's cache only saves time: what it held is measured again, and replaced.
    if (!configured.empty()) throw;
    perf_model_note_ += std::string(" not read: ") + malformed.what();
  }
}

DeviceDispatch::~DeviceDispatch() = default;

std::vector<std::string> DeviceDispatch::shutdown() {
  std::vector<std::string> errors;
  try {
    mover_->release_all();
  } catch (const std::exception& e) {
    errors.push_back(e.what());
  }
  // Stopped, not destroyed: idle CPU workers still read the device workers' backlogs while
  // looking for pooled work, until the runtime stops them too. ~DeviceDispatch destroys them.
  for (auto& worker : device_workers_) worker->stop();
  if (host_pins_) host_pins_->close();
  if (!perf_model_file_.empty())
    if (std::string why = perf_model_.save(perf_model_file_); !why.empty())
      errors.push_back("the performance model is not kept: " + why);
  return errors;
}

// --- validation -----------------------------------------------------------------------------

bool DeviceDispatch::runnable(const TaskDesc& desc) const {
  if (desc.placement == Placement::cpu_only) return desc.invoke != nullptr;
  bool runnable = desc.invoke && desc.placement != Placement::gpu_only;
  for (int node = 1; node < nodes(); ++node) runnable |= has_implementation(desc, slots_[node]);
  return runnable;
}

const Device* DeviceDispatch::device_refusing(const TaskDesc& desc, const ReductionOps& ops) const {
  if (desc.placement == Placement::cpu_only) return nullptr;
  for (int node = 1; node < nodes(); ++node)
    if (has_implementation(desc, slots_[node]) && !operator_runs_in(slots_[node], ops))
      return devices_[node - 1].get();
  return nullptr;
}

// --- Procedure: place -----------------------------------------------------------------------

void DeviceDispatch::adopt(Task& task, const TaskDesc* desc) {
  if (desc) {
    task.type_name = desc->type_name;
    task.invoke_cuda = desc->invoke_cuda;
    task.invoke_emulated = desc->invoke_emulated;
    task.placement = desc->placement;
    task.runs_after_failed_copy = desc->runs_after_failed_copy;
    // Tasks that write at once must write one copy: the host's (check_task refused those that
    // cannot run there).
    for (std::uint32_t i = 0; i < desc->access_count; ++i)
      if (writes_at_once(desc->accesses[i].mode)) task.placement = Placement::cpu_only;
  } else {
    task.type_name = task.name;
    task.invoke_cuda = nullptr;
    task.invoke_emulated = nullptr;
    task.placement = Placement::cpu_only;
  }
  task.node = 0;
  task.expected_ns = 0;
  task.stream = 0;
  task.explored = false;
  task.pending_fills_value = 0;
  task.staging_error_value = nullptr;
  task.work_size = 0;
  task.bytes_moved = 0;
}

void DeviceDispatch::size(Task& task, const TaskDesc& desc) {
  double work = desc.work;
  if (work < 0 && desc.work_hint)
    work = (*desc.work_hint)(Shapes(task.accesses, task.access_count));
  if (work >= 0) {
    task.work_size = static_cast<std::size_t>(work + 0.5);
    return;
  }
  task.work_size = PlacementPolicy::data_bytes(task);
}

void DeviceDispatch::place(Task* task, int worker) {
  if (task->reduction_flush) {
    task->node = reductions_.flush_node(*task);
    if (task->node != 0) {
      scheduler_.placed_on_device(*task, false);
      device_workers_[task->node - 1]->push(task);
      return;
    }
  }
  if (task->host_access || task->reduction_flush) {
    task->node = 0;
    stage_and_dispatch(task, worker);
    return;
  }
  const int node = placement_->choose(*task);
  if (node == PlacementPolicy::pooled) {
    scheduler_.notify_cpu_work();
    for (auto& device : device_workers_) device->notify_work();
    return;
  }
  task->node = node;
  if (task->add_count != 0) reductions_.rename_remote_adds(task, worker);
  if (task->node == 0) {
    placement_->cpu_queued(task->expected_ns);
    stage_and_dispatch(task, worker);
  } else {
    scheduler_.placed_on_device(*task, false);
    device_workers_[task->node - 1]->push(task);  // it reserves memory, then calls stage()
  }
}

bool DeviceDispatch::pull_for_cpu(int worker) {
  Task* task = placement_->pull(0);
  if (!task) return false;
  task->node = 0;
  if (task->add_count != 0) reductions_.rename_remote_adds(task, worker);
  placement_->cpu_queued(task->expected_ns);
  stage_and_dispatch(task, worker);  // onto this worker's deque once its data is home
  return true;
}

Task* DeviceDispatch::pull_for_device(int node, bool resident_only) {
  Task* task = placement_->pull(node, resident_only);
  // Left for the host, whose workers may have declined it and slept before the backlogs
  // changed: one of them looks again. (A device that asked only for tasks on its data left
  // nothing: it takes the others once its copies make room.)
  if (!task && !resident_only && placement_->has_pooled()) scheduler_.notify_cpu_work();
  if (task) {
    task->node = node;
    scheduler_.placed_on_device(*task, false);
    if (task->add_count != 0) reductions_.rename_remote_adds(task, -1);
  }
  return task;
}

// The main program's root has no node: the walk stops below it.
bool DeviceDispatch::has_ancestor_on(const Task& task, int node) const {
  for (const Task* ancestor = task.parent; ancestor && ancestor != scheduler_.root();
       ancestor = ancestor->parent)
    if (ancestor->node == node) return true;
  return false;
}

void DeviceDispatch::forget_exploration(Task& task) {
  if (!task.explored) return;
  perf_model_.release_exploration(task.type_name, kind_of(task.node));
  task.explored = false;
}

// --- Procedure: stage and dispatch ----------------------------------------------------------

void DeviceDispatch::stage(Task& task) { stage_and_dispatch(&task, -1); }

// Acquires the task's data on its node; dispatches it when all is there, else leaves it to the
// last copy it waits for (fill_landed). The count starts at one for this pass, so that copies
// landing during the pass cannot dispatch it early.
void DeviceDispatch::stage_and_dispatch(Task* task, int worker) {
  for (;;) {
    task->pending_fills().store(1, std::memory_order_relaxed);
    if (mover_->stage(*task, task->node) == 0) {
      dispatch(task, worker);
      return;
    }
    if (task->pending_fills().fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (task->staging_error().load(std::memory_order_acquire)) {
      staging_failed(task);
      return;
    }
  }
}

void DeviceDispatch::fill_landed(void* context, const std::string& error) {
  Task* task = static_cast<Task*>(context);
  if (!error.empty()) {
    auto* message = new std::string(error);
    std::string* none = nullptr;
    if (!task->staging_error().compare_exchange_strong(none, message, std::memory_order_acq_rel))
      delete message;
  }
  if (task->pending_fills().fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (task->staging_error().load(std::memory_order_acquire)) {
    staging_failed(task);
  } else {
    stage_and_dispatch(task, -1);
  }
}

void DeviceDispatch::staging_failed(Task* task) {
  const std::string* failure = task->staging_error().load(std::memory_order_acquire);
  if (task->host_access) {
    dispatch(task, -1);  // the host access reports it
  } else if (task->node != 0) {
    device_workers_[task->node - 1]->staging_failed(task, *failure);
  } else if (task->runs_after_failed_copy) {
    scheduler_.record_failure(*task, std::make_exception_ptr(std::runtime_error(*failure)),
                              *failure);
    scheduler_.push_to_cpu(task, -1);  // its body sees no data (Scheduler::run_body)
  } else {
    placement_->cpu_done(task->expected_ns);
    if (task->reduction_flush) reductions_.discard_partials(*task);
    scheduler_.fail_task(task, std::make_exception_ptr(std::runtime_error(*failure)), *failure, -1);
  }
}

// Hands a task whose data is where it runs to that node's queue.
void DeviceDispatch::dispatch(Task* task, int worker) {
  if (task->host_access) {
    Scheduler::release_host_access(task);
  } else if (task->node != 0) {
    scheduler_.placed_on_device(*task, true);
    device_workers_[task->node - 1]->launch(task);
  } else {
    scheduler_.push_to_cpu(task, worker);
  }
}

// --- Procedure: ended -----------------------------------------------------------------------

bool DeviceDispatch::cancel_if_poisoned(Task& task) { return scheduler_.cancel_if_poisoned(task); }

void DeviceDispatch::cpu_task_ran(Task& task, double seconds) {
  perf_model_.record(task.type_name, DeviceKind::cpu, task.work_size, seconds, task.explored);
  tasks_per_node_[0].fetch_add(1, std::memory_order_relaxed);
  if (task.explored) explored_run_recorded();
}

// A pooled task whose type is being explored goes by the runs so far: the CPU workers may now
// take tasks they declined before this run and slept. One of them looks again; tasks pooled
// since wake others.
void DeviceDispatch::explored_run_recorded() {
  if (placement_->has_pooled()) scheduler_.notify_cpu_work();
}

void DeviceDispatch::device_task_ended(Task& task, int node, OperationResult result) {
  if (task.reduction_flush) {
    if (trace_.enabled() && result.error.empty())
      trace_.record_device(node, TraceRecorder::DeviceTrack::flushes, task.name, result.seconds, 0,
                           TraceRecorder::handle_label(task.accesses[0].handle->name()));
    reductions_.device_flush_ended(task, node, result.error);
    scheduler_.finish_task(&task, -1);
    return;
  }
  Device& device = *devices_[node - 1];
  if (!result.error.empty()) {
    std::string message = result.error + " (on " + device.name() + ")";
    std::exception_ptr error =
        result.exception ? result.exception : std::make_exception_ptr(std::runtime_error(message));
    scheduler_.fail_task(&task, std::move(error), std::move(message), -1);
    return;
  }
  perf_model_.record(task.type_name, device.kind(), task.work_size, result.seconds, task.explored);
  if (task.explored) explored_run_recorded();
  tasks_per_node_[node].fetch_add(1, std::memory_order_relaxed);
  kernel_seconds_[node - 1].fetch_add(result.seconds, std::memory_order_relaxed);
  if (task_statistics_)
    task_statistics_->record(cpu_workers_ + node - 1, task.type_name, device.kind(), result.seconds,
                             task.bytes_moved);
  if (trace_.enabled()) trace_.record_kernel(node, task.stream, task.name, result.seconds);
  for (std::uint32_t i = 0; i < task.access_count; ++i)
    if (overwrites(task.accesses[i].mode))
      task.accesses[i].handle->clear_poison(task.progress(i).required_version);
  scheduler_.finish_task(&task, -1);
}

void DeviceDispatch::device_refused(Task& task, int node, const std::string& why) {
  if (task.reduction_flush) {  // no room to apply there: apply on the host
    task.accesses[0].data = nullptr;
    task.node = 0;
    stage_and_dispatch(&task, -1);
    return;
  }
  if (task.invoke && task.placement != Placement::gpu_only) {
    // Run it on the CPU instead: nothing was staged on the device.
    forget_exploration(task);
    for (std::uint32_t i = 0; i < task.access_count; ++i) task.accesses[i].data = nullptr;
    task.node = 0;
    placement_->cpu_queued(task.expected_ns);
    stage_and_dispatch(&task, -1);
    return;
  }
  std::string message = "cannot run on " + devices_[node - 1]->name() + ": " + why;
  scheduler_.fail_task(&task, std::make_exception_ptr(std::runtime_error(message)), message, -1);
}

// --- reductions and statistics --------------------------------------------------------------

bool DeviceDispatch::can_apply_on(int node, const ReductionOps& ops) const {
  return operator_runs_in(slots_[node], ops);
}

std::size_t DeviceDispatch::partial_bytes_on_devices() const {
  std::size_t bytes = 0;
  for (int node = 1; node < nodes(); ++node)
    bytes += mover_->counters(node).partial_bytes.load(std::memory_order_relaxed);
  return bytes;
}

void DeviceDispatch::add_statistics(std::vector<DeviceStatistics>& nodes) const {
  nodes[0].tasks = tasks_per_node_[0].load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const TransferCounters& counters = mover_->counters(static_cast<int>(i) + 1);
    DeviceStatistics n;
    n.name = devices_[i]->name();
    n.tasks = tasks_per_node_[i + 1].load(std::memory_order_relaxed);
    n.bytes_to_device = counters.bytes_to_device.load(std::memory_order_relaxed);
    n.bytes_to_host = counters.bytes_to_host.load(std::memory_order_relaxed);
    n.bytes_from_peers = counters.bytes_from_peers.load(std::memory_order_relaxed);
    n.bytes_zeroed = counters.bytes_zeroed.load(std::memory_order_relaxed);
    n.evictions = counters.evictions.load(std::memory_order_relaxed);
    n.transfer_seconds = counters.transfer_seconds.load(std::memory_order_relaxed);
    n.kernel_seconds = kernel_seconds_[i].load(std::memory_order_relaxed);
    nodes.push_back(std::move(n));
  }
}

}  // namespace versa::detail
