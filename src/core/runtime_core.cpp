#include "core/runtime_core.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <thread>

#include "emulated/emulated_device.hpp"
#include "versa/error.hpp"

namespace versa::detail {

namespace {

std::atomic<std::uint64_t> next_runtime_id{1};

// The task running on this thread (for spawn/sync); null outside tasks.
thread_local Task* this_thread_task = nullptr;

// One-entry cache of the last interned name, per thread and runtime: submitting many tasks with
// the same name costs a length check and a memcmp instead of a locked hash lookup.
struct NameCache {
  std::uint64_t runtime = 0;
  std::string_view name;  // points into the runtime's name table
};
thread_local NameCache last_name;

std::string quoted_handle(const HandleState* handle) {
  return handle->name().empty() ? std::string("an unnamed handle")
                                : "handle '" + handle->name() + "'";
}

}  // namespace

RuntimeCore::RuntimeCore(Config config)
    : id_(next_runtime_id.fetch_add(1)),
      config_(std::move(config)),
      task_pool_(config_.cpu_workers > 0 ? config_.cpu_workers : topology_.cores()),
      trace_(!config_.trace_file.empty(),
             config_.cpu_workers > 0 ? config_.cpu_workers : topology_.cores()),
      worker_locals_(config_.cpu_workers > 0 ? config_.cpu_workers : topology_.cores()),
      partials_(config_.reduction_memory_limit) {
  root_.name = "main";
  flush_name_ = intern_name("reduction flush");
  open_devices();
  if (!config_.quiet) std::fprintf(stderr, "%s\n", summary_.c_str());
  const int count = static_cast<int>(worker_locals_.size());
  workers_ = std::make_unique<WorkerPool>(count, config_.pin_workers, topology_, *this);
}

void RuntimeCore::open_devices() {
  const int cpus = static_cast<int>(worker_locals_.size());
  std::string gpu_note;
  devices_ = open_cuda_devices(config_.gpus, config_.device_memory_limit, gpu_note);
  for (std::size_t i = 0; i < config_.emulated_devices.size(); ++i)
    devices_.push_back(std::make_unique<EmulatedDevice>(
        static_cast<int>(i), config_.emulated_devices[i], config_.device_memory_limit));
  summary_ = "versa: " + std::to_string(cpus) + " CPU worker" + (cpus == 1 ? "" : "s") + " (" +
             topology_.summary() + "); GPUs: " + gpu_note + "; emulated devices: ";
  if (config_.emulated_devices.empty()) summary_ += "none";
  if (devices_.empty()) return;

  std::vector<DataMover::Node> mover_nodes(1);
  std::vector<PlacementPolicy::Node> placement_nodes(1);
  bool first_emulated = true;
  for (auto& device : devices_) {
    Device* d = device.get();
    memories_.push_back(std::make_unique<NodeMemory>(
        d->memory_capacity(), [d](std::size_t bytes) { return d->allocate(bytes); },
        [d](void* pointer) { d->deallocate(pointer); }));
    mover_nodes.push_back({d, memories_.back().get(), nullptr});
    if (d->kind() == DeviceKind::emulated) {
      summary_ += (first_emulated ? "" : ", ") + d->name() + " (" +
                  std::to_string(d->memory_capacity() >> 20) + " MiB, " +
                  std::to_string(static_cast<int>(d->bandwidth() / 1e9)) + " GB/s)";
      first_emulated = false;
    }
  }
  for (auto& device : devices_) {
    if (device->kind() != DeviceKind::cuda || host_pins_) continue;
    Device* d = device.get();  // one registration serves every GPU
    host_pins_ = std::make_shared<HostPins>(
        [d](void* data, std::size_t bytes) { return d->register_host_memory(data, bytes); },
        [d](void* data) { d->unregister_host_memory(data); });
  }
  mover_ = std::make_unique<DataMover>(mover_nodes, *this);
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const int node = static_cast<int>(i) + 1;
    device_workers_.push_back(std::make_unique<DeviceWorker>(node, *devices_[i], *mover_, *this));
    mover_->attach_worker(node, device_workers_.back().get());
    placement_nodes.push_back(
        {devices_[i]->kind(), devices_[i].get(), device_workers_.back().get()});
    trace_.add_track(devices_[i]->name());
  }
  placement_ = std::make_unique<PlacementPolicy>(placement_nodes, cpus, perf_model_);
  tasks_per_node_ = std::vector<std::atomic<std::uint64_t>>(devices_.size() + 1);
  kernel_seconds_ = std::vector<std::atomic<double>>(devices_.size());
  if (!config_.perf_model_file.empty()) perf_model_.load(config_.perf_model_file);
}

RuntimeCore::~RuntimeCore() {
  wait_for_pending();
  try {
    flush_all_partials();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "versa: %s\n", e.what());
  }
  if (config_.print_statistics) print_statistics();
  if (mover_) {
    try {
      mover_->release_all();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "versa: %s\n", e.what());
    }
    device_workers_.clear();
    if (host_pins_) host_pins_->close();
    if (!config_.perf_model_file.empty()) {
      try {
        perf_model_.save(config_.perf_model_file);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "versa: %s\n", e.what());
      }
    }
  }
  {
    std::lock_guard<std::mutex> guard(failures_mutex_);
    for (const auto& failure : failures_)
      std::fprintf(stderr, "versa: unreported failure of task '%s': %s\n",
                   failure->task_name.c_str(), failure->message.c_str());
    for (const auto& misuse : misuses_) std::fprintf(stderr, "versa: %s\n", misuse.c_str());
  }
  workers_.reset();
  if (trace_.enabled()) {
    try {
      trace_.write(config_.trace_file);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "versa: %s\n", e.what());
    }
  }
}

HandleState* RuntimeCore::create_handle(const void* data, Layout layout, std::string name) {
  const std::size_t elements = layout.cols == 0 ? 0 : layout.ld * (layout.cols - 1) + layout.rows;
  if (!data && layout.rows * layout.cols != 0)
    throw std::invalid_argument(
        "cannot register " + (name.empty() ? "a handle" : "'" + name + "'") +
        ": null data pointer for " + std::to_string(elements) + " elements");
  if (layout.ld < layout.rows)
    throw std::invalid_argument("cannot register tile " + (name.empty() ? "" : "'" + name + "' ") +
                                "with leading dimension " + std::to_string(layout.ld) +
                                " smaller than its row count " + std::to_string(layout.rows));
  auto* handle = new HandleState(const_cast<void*>(data), layout, std::move(name), this, nodes());
  // Copies from pageable memory go through a bounce buffer and block the copying thread: pin
  // the handle's memory unless it is small or lies in a range pinned already (a TiledMatrix
  // pins its whole matrix; its tiles' ranges overlap, which CUDA would refuse).
  constexpr std::size_t pin_threshold = 256 << 10;
  if (host_pins_ && layout.bytes() >= pin_threshold &&
      host_pins_->pin(data, elements * layout.element_size))
    handle->set_host_pins(host_pins_);
  return handle;
}

const char* RuntimeCore::intern_name(std::string_view name) {
  if (last_name.runtime == id_ && last_name.name == name) return last_name.name.data();
  std::lock_guard<std::mutex> guard(names_mutex_);
  const std::string& stored = *names_.emplace(name).first;
  last_name = {id_, stored};
  return stored.c_str();
}

void RuntimeCore::keep_alive(const std::shared_ptr<const TaskTypeBase>& type) {
  if (type->registered_with.load(std::memory_order_acquire) == id_) return;
  std::lock_guard<std::mutex> guard(types_mutex_);
  if (std::find(types_.begin(), types_.end(), type) == types_.end()) types_.push_back(type);
  type->registered_with.store(id_, std::memory_order_release);
}

void RuntimeCore::validate(const TaskDesc& desc, const Task* parent) const {
  bool runnable = desc.invoke && desc.placement != Placement::gpu_only;
  for (const auto& device : devices_) {
    if (desc.placement == Placement::cpu_only) break;
    runnable |= device->kind() == DeviceKind::cuda ? desc.invoke_cuda != nullptr
                                                   : desc.invoke_emulated != nullptr;
  }
  if (!runnable) {
    std::string has;
    if (desc.invoke) has += "cpu";
    if (desc.invoke_cuda) has += has.empty() ? "cuda" : ", cuda";
    if (desc.cuda_left_out)
      has += has.empty() ? "cuda (left out: Versa is built without CUDA)"
                         : ", cuda (left out: Versa is built without CUDA)";
    throw std::invalid_argument(
        "task '" + std::string(desc.name) + "' has no implementation for any present device " +
        "(present: " + (placement_ ? placement_->present_kinds() : std::string("cpu")) +
        "; it has: " + (has.empty() ? "none" : has) + "; placement " + to_string(desc.placement) +
        ")");
  }
  const AccessRecord* accesses = desc.accesses;
  const std::size_t n = desc.access_count;
  if (n > UINT16_MAX)
    throw std::invalid_argument("task '" + std::string(desc.name) + "' has " + std::to_string(n) +
                                " accesses; at most " + std::to_string(UINT16_MAX) +
                                " are supported");
  for (std::size_t i = 0; i < n; ++i) {
    if (!accesses[i].handle)
      throw std::invalid_argument("task '" + std::string(desc.name) + "': access " +
                                  std::to_string(i + 1) +
                                  " is to an empty handle (default-constructed or moved-from)");
    if (accesses[i].mode == AccessMode::add) check_reduction(desc, accesses[i]);
  }
  // A handle given twice would make the task wait for itself. Small tasks compare pairwise;
  // larger ones sort a copy.
  auto duplicate = [&](const HandleState* h) {
    throw std::invalid_argument("task '" + std::string(desc.name) + "' accesses " +
                                quoted_handle(h) + " twice; give each handle once, with the " +
                                "strongest mode needed");
  };
  if (n <= 16) {
    for (std::size_t i = 1; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (accesses[i].handle == accesses[j].handle) duplicate(accesses[i].handle);
  } else {
    std::vector<const HandleState*> sorted(n);
    for (std::size_t i = 0; i < n; ++i) sorted[i] = accesses[i].handle;
    std::sort(sorted.begin(), sorted.end());
    auto it = std::adjacent_find(sorted.begin(), sorted.end());
    if (it != sorted.end()) duplicate(*it);
  }
  // The child would wait for any ancestor holding one of its handles, and that ancestor waits
  // for its descendants.
  for (const Task* ancestor = parent; ancestor && ancestor != &root_; ancestor = ancestor->parent) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::uint32_t j = 0; j < ancestor->access_count; ++j)
        if (accesses[i].handle == ancestor->accesses[j].handle)
          throw std::invalid_argument(
              "task '" + std::string(desc.name) + "' is spawned inside task '" + ancestor->name +
              "', which holds " + quoted_handle(accesses[i].handle) +
              ": the child would wait for that task and that task for the child. Pass the data "
              "through the enclosing task's view, or submit() the task instead of spawn()");
  }
}

Task* RuntimeCore::create_task(const TaskDesc& desc, int worker) {
  // Default-initialisation: the inline storage is not zeroed (it is written before use).
  Task* task = new (task_pool_.allocate(worker)) Task;
  task->name = desc.name;
  task->priority = desc.priority;
  task->invoke = desc.invoke;
  task->destroy = desc.destroy;
  if (!devices_.empty()) {
    task->type_name = desc.type_name;
    task->invoke_cuda = desc.invoke_cuda;
    task->invoke_emulated = desc.invoke_emulated;
    task->placement = desc.placement;
    prepare_for_devices(task);
  }
  const std::size_t n = desc.access_count;
  task->access_count = static_cast<std::uint32_t>(n);
  if (n <= Task::inline_accesses) {
    task->accesses = reinterpret_cast<AccessRecord*>(task->inline_records);
  } else {
    task->heap_accesses.reset(new AccessRecord[n]);
    task->accesses = task->heap_accesses.get();
  }
  std::memcpy(static_cast<void*>(task->accesses), desc.accesses, n * sizeof(AccessRecord));
  if (desc.closure_size <= Task::inline_closure_bytes &&
      desc.closure_align <= alignof(std::max_align_t)) {
    task->closure = task->inline_closure;
  } else {
    task->heap_closure.reset(new std::byte[desc.closure_size + desc.closure_align]);
    void* p = task->heap_closure.get();
    std::size_t space = desc.closure_size + desc.closure_align;
    task->closure = std::align(desc.closure_align, desc.closure_size, p, space);
  }
  desc.move(task->closure, desc.closure);
  return task;
}

void RuntimeCore::prepare_for_devices(Task* task) {
  task->node = 0;
  task->expected_ns = 0;
  task->stream = 0;
  task->explored = false;
  task->pending_fills_value = 0;
  task->staging_error_value = nullptr;
}

// A task placed to calibrate the model ends without a measurement there: give the claim back,
// or that combination would never be calibrated.
void RuntimeCore::forget_exploration(Task& task) {
  if (devices_.empty() || !task.explored) return;
  const DeviceKind kind = task.node == 0 ? DeviceKind::cpu : devices_[task.node - 1]->kind();
  perf_model_.release_exploration(task.type_name, kind, PlacementPolicy::data_bytes(task));
  task.explored = false;
}

void RuntimeCore::submit(const TaskDesc& desc) {
  const int worker = workers_->current_worker();
  Task* parent = nullptr;
  if (desc.is_child) parent = (worker >= 0 && this_thread_task) ? this_thread_task : &root_;
  validate(desc, parent);
  Task* task = create_task(desc, worker);
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    AccessRecord& access = task->accesses[i];
    bool flush_first;
    access.required_version = access.handle->register_access(access.mode, flush_first);
    access.layout = access.handle->layout();
    if (flush_first) submit_flush(access.handle, access.required_version - 1, worker);
    if (access.mode == AccessMode::commute) ++task->exclusive_count;
    if (access.mode == AccessMode::add) ++task->add_count;
  }
  // Count the task before it can possibly finish: once parked, another thread may run it.
  pending_.fetch_add(1, std::memory_order_relaxed);
  if (parent) {
    task->parent = parent;
    parent->children.fetch_add(1, std::memory_order_relaxed);
  }
  if (try_make_ready(task, worker)) schedule(task, worker);
}

bool RuntimeCore::try_make_ready(Task* task, int worker) {
  const std::uint32_t n = task->access_count;
  for (std::uint32_t i = task->next_check; i < n; ++i) {
    const AccessRecord& access = task->accesses[i];
    if (access.handle->has_version(access.required_version)) continue;
    task->next_check = i;  // before parking: afterwards another thread owns the task
    task->waiter.owner = task;
    if (access.handle->park_until(&task->waiter, access.required_version)) return false;
  }
  task->next_check = n;
  // A flush has no CPU body: tasks with one decide this on the first cache line.
  if (!task->invoke && task->reduction_flush) {
    PartialSlots* slots = task->accesses[0].handle->partials();
    if (slots && !slots->empty()) return true;
    finish_task(task, worker);  // every add ran in place: nothing to apply
    return false;
  }
  if (task->add_count != 0) claim_add_accesses(task, worker);
  return task->exclusive_count == 0 || take_exclusive_flags(task, worker);
}

namespace {
// Commutes, and adds that could not be renamed, run holding their handle's exclusive flag.
bool wants_flag(const AccessRecord& access) {
  return access.mode == AccessMode::commute || access.add_role == AddRole::needs_flag;
}
void mark_flags_taken(Task* task) {
  for (std::uint32_t i = 0; i < task->access_count; ++i)
    if (task->accesses[i].add_role == AddRole::needs_flag)
      task->accesses[i].add_role = AddRole::in_place;
}
}  // namespace

// Taking every exclusive flag a task needs or none (and parking at the first one that is busy)
// rules out deadlock between tasks that need several.
bool RuntimeCore::take_exclusive_flags(Task* task, int worker) {
  auto wake_one = [this, worker](Waiter* w) { wake(w, worker); };
  for (;;) {
    std::uint32_t taken = 0;
    HandleState* busy = nullptr;
    for (std::uint32_t i = 0; i < task->access_count; ++i) {
      const AccessRecord& access = task->accesses[i];
      if (!wants_flag(access)) continue;
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
      if (!wants_flag(task->accesses[i])) continue;
      task->accesses[i].handle->give_back_exclusive(wake_one);
      --taken;
    }
    if (!busy->take_exclusive_or_park(&task->waiter)) return false;
    busy->give_back_exclusive(wake_one);  // free again now: retry the whole set
  }
}

void RuntimeCore::schedule(Task* task, int worker) {
  if (!devices_.empty()) {
    place(task, worker);
  } else if (task->host_access) {
    task->host_ready.store(true, std::memory_order_release);
    task->host_ready.notify_all();
  } else if (worker >= 0) {
    workers_->push_local(worker, task);
  } else {
    workers_->push_external(task);
  }
}

// Hands a task whose data is where it runs to that node's queue.
void RuntimeCore::dispatch(Task* task, int worker) {
  if (task->host_access) {
    task->host_ready.store(true, std::memory_order_release);
    task->host_ready.notify_all();
  } else if (task->node != 0) {
    device_workers_[task->node - 1]->launch(task);
  } else if (worker >= 0) {
    workers_->push_local(worker, task);
  } else {
    workers_->push_external(task);
  }
}

void RuntimeCore::place(Task* task, int worker) {
  if (task->reduction_flush) {
    task->node = flush_node(*task);
    if (task->node != 0) {
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
    workers_->notify_work();
    for (auto& device : device_workers_) device->notify_work();
    return;
  }
  task->node = node;
  if (task->add_count != 0) rename_remote_adds(task, worker);
  if (task->node == 0) {
    placement_->cpu_queued(task->expected_ns);
    stage_and_dispatch(task, worker);
  } else {
    device_workers_[task->node - 1]->push(task);  // it reserves memory, then calls stage()
  }
}

void RuntimeCore::stage(Task& task, int node) {
  (void)node;  // task.node
  stage_and_dispatch(&task, -1);
}

// Acquires the task's data on its node; dispatches it when all is there, else leaves it to the
// last copy it waits for (fill_landed). The count starts at one for this pass, so that copies
// landing during the pass cannot dispatch it early.
void RuntimeCore::stage_and_dispatch(Task* task, int worker) {
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

void RuntimeCore::fill_landed(void* context, const std::string& error) {
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

void RuntimeCore::staging_failed(Task* task) {
  const std::string* failure = task->staging_error().load(std::memory_order_acquire);
  if (task->host_access) {
    dispatch(task, -1);  // acquire_host reports it
  } else if (task->node != 0) {
    device_workers_[task->node - 1]->staging_failed(task, *failure);
  } else {
    placement_->cpu_done(task->expected_ns);
    fail_task(task, std::make_exception_ptr(std::runtime_error(*failure)), *failure, -1);
  }
}

void RuntimeCore::wake(Waiter* waiter, int worker) {
  Task* task = static_cast<Task*>(waiter->owner);
  if (try_make_ready(task, worker)) schedule(task, worker);
}

std::shared_ptr<const Failure> RuntimeCore::inherited_failure(Task* task) {
  std::shared_ptr<const Failure> cause;
  for (std::uint32_t i = 0; i < task->access_count && !cause; ++i) {
    const AccessRecord& access = task->accesses[i];
    if (access.mode == AccessMode::add) {
      cause = access.handle->shared_poison();
    } else if (access.mode != AccessMode::write_only) {
      cause = access.handle->poison();
    }
  }
  if (cause) {
    cancelled_.fetch_add(1, std::memory_order_relaxed);
    if (cause->reported.exchange(false, std::memory_order_acq_rel)) record_failure(cause);
  }
  return cause;
}

void RuntimeCore::run_task(Task* task, int worker) {
  if (!task->invoke && task->reduction_flush) {
    apply_partials(task);
    if (placement_) placement_->cpu_done(task->expected_ns);
    finish_task(task, worker);
    return;
  }
  std::shared_ptr<const Failure> cause = inherited_failure(task);
  if (!cause) {
    for (std::uint32_t i = 0; i < task->access_count; ++i) {
      AccessRecord& access = task->accesses[i];
      access.data = access.handle->data();
      access.layout = access.handle->layout();
      // Overwriting everything makes data left unusable by a failure valid again.
      if (access.mode == AccessMode::write_only) access.handle->set_poison(nullptr);
    }
    if (task->add_count != 0) prepare_host_partials(task);
    Task* enclosing = this_thread_task;
    this_thread_task = task;
    const bool timed = trace_.enabled() || !devices_.empty();
    const auto start = timed ? TraceRecorder::Clock::now() : TraceRecorder::Clock::time_point();
    try {
      task->invoke(task->closure, task->accesses);
    } catch (...) {
      const std::exception_ptr error = std::current_exception();
      auto failure = std::make_shared<Failure>();
      failure->task_name = task->name;
      failure->exception = error;
      failure->message = describe(error);
      cause = std::move(failure);
      record_failure(cause);
    }
    if (timed) {
      const auto end = TraceRecorder::Clock::now();
      if (trace_.enabled()) trace_.record(worker, task->name, start, end);
      if (!devices_.empty() && !cause) {
        perf_model_.record(task->type_name, DeviceKind::cpu, PlacementPolicy::data_bytes(*task),
                           std::chrono::duration<double>(end - start).count(), task->explored);
        tasks_per_node_[0].fetch_add(1, std::memory_order_relaxed);
      }
    }
    // Implicit sync: a task is finished only when its children are.
    while (task->children.load(std::memory_order_acquire) != 0) {
      if (!workers_->run_one(worker)) std::this_thread::yield();
    }
    this_thread_task = enclosing;
  }
  if (placement_) placement_->cpu_done(task->expected_ns);
  if (cause) {
    forget_exploration(*task);
    poison_outputs(task, cause);
  }
  finish_task(task, worker);
}

bool RuntimeCore::cancel_if_poisoned(Task& task) {
  if (task.reduction_flush) return false;  // it discards the partials itself
  std::shared_ptr<const Failure> cause = inherited_failure(&task);
  if (!cause) return false;
  forget_exploration(task);
  poison_outputs(&task, cause);
  finish_task(&task, -1);
  return true;
}

void RuntimeCore::fail_task(Task* task, std::exception_ptr error, std::string message, int worker) {
  auto failure = std::make_shared<Failure>();
  failure->task_name = task->name;
  failure->exception = std::move(error);
  failure->message = std::move(message);
  record_failure(failure);
  forget_exploration(*task);
  poison_outputs(task, failure);
  finish_task(task, worker);
}

void RuntimeCore::device_task_ended(Task& task, int node, OperationResult result) {
  if (task.reduction_flush) {
    device_flush_ended(task, node, result);
    return;
  }
  Device& device = *devices_[node - 1];
  if (!result.error.empty()) {
    std::string message = result.error + " (on " + device.name() + ")";
    std::exception_ptr error =
        result.exception ? result.exception : std::make_exception_ptr(std::runtime_error(message));
    fail_task(&task, std::move(error), std::move(message), -1);
    return;
  }
  perf_model_.record(task.type_name, device.kind(), PlacementPolicy::data_bytes(task),
                     result.seconds, task.explored);
  tasks_per_node_[node].fetch_add(1, std::memory_order_relaxed);
  kernel_seconds_[node - 1].fetch_add(result.seconds, std::memory_order_relaxed);
  if (trace_.enabled()) {
    const auto end = TraceRecorder::Clock::now();
    const auto start = end - std::chrono::duration_cast<TraceRecorder::Clock::duration>(
                                 std::chrono::duration<double>(result.seconds));
    trace_.record(static_cast<int>(worker_locals_.size()) + node - 1, task.name, start, end);
  }
  for (std::uint32_t i = 0; i < task.access_count; ++i)
    if (task.accesses[i].mode == AccessMode::write_only)
      task.accesses[i].handle->set_poison(nullptr);
  finish_task(&task, -1);
}

void RuntimeCore::device_refused(Task& task, int node, const std::string& why) {
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
  fail_task(&task, std::make_exception_ptr(std::runtime_error(message)), message, -1);
}

void RuntimeCore::retire_replicas(HandleState& handle) {
  try {
    mover_->retire(handle);
  } catch (const std::exception& e) {
    report_misuse(std::string("while destroying a handle: ") + e.what());
  }
}

void RuntimeCore::print_statistics() const {
  std::fprintf(
      stderr, "versa: statistics%s\n",
      devices_.empty() ? " (tasks are counted per device when accelerators are present)" : "");
  std::fprintf(stderr, "  %-28s %10s %14s %14s %10s %12s %12s\n", "device", "tasks",
               "MiB to device", "MiB to host", "evictions", "copies s", "kernels s");
  for (const DeviceStatistics& d : statistics())
    std::fprintf(stderr, "  %-28s %10llu %14.1f %14.1f %10llu %12.3f %12.3f\n", d.name.c_str(),
                 static_cast<unsigned long long>(d.tasks),
                 static_cast<double>(d.bytes_to_device) / (1 << 20),
                 static_cast<double>(d.bytes_to_host) / (1 << 20),
                 static_cast<unsigned long long>(d.evictions), d.transfer_seconds,
                 d.kernel_seconds);
}

std::vector<DeviceStatistics> RuntimeCore::statistics() const {
  std::vector<DeviceStatistics> nodes(1);
  nodes[0].name = "cpu";
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const TransferCounters& counters = mover_->counters(static_cast<int>(i) + 1);
    DeviceStatistics n;
    n.name = devices_[i]->name();
    n.tasks = tasks_per_node_[i + 1].load(std::memory_order_relaxed);
    n.bytes_to_device = counters.bytes_to_device.load(std::memory_order_relaxed);
    n.bytes_to_host = counters.bytes_to_host.load(std::memory_order_relaxed);
    n.evictions = counters.evictions.load(std::memory_order_relaxed);
    n.transfer_seconds = counters.transfer_seconds.load(std::memory_order_relaxed);
    n.kernel_seconds = kernel_seconds_[i].load(std::memory_order_relaxed);
    nodes.push_back(std::move(n));
  }
  if (!devices_.empty()) nodes[0].tasks = tasks_per_node_[0].load(std::memory_order_relaxed);
  return nodes;
}

void RuntimeCore::finish_accesses(Task* task, int worker) {
  auto wake_one = [this, worker](Waiter* w) { wake(w, worker); };
  for (std::uint32_t i = 0; i < task->access_count; ++i) {
    AccessRecord& access = task->accesses[i];
    if (access.add_role == AddRole::renamed) attach_partial(task, access);
    access.handle->finish_access(
        access.mode == AccessMode::commute || access.add_role == AddRole::in_place, wake_one);
  }
}

void RuntimeCore::finish_task(Task* task, int worker) {
  finish_accesses(task, worker);
  if (Task* parent = task->parent) {
    if (parent->children.fetch_sub(1, std::memory_order_acq_rel) == 1 && parent == &root_)
      root_.children.notify_all();
  }
  destroy_task(task, worker);
  if (worker >= 0) {
    ++worker_locals_[worker].finished;
  } else if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    pending_.notify_all();
  }
}

void RuntimeCore::destroy_task(Task* task, int worker) {
  if (task->destroy) task->destroy(task->closure);
  if (!devices_.empty()) delete task->staging_error().load(std::memory_order_relaxed);
  task->~Task();
  task_pool_.release(task, worker);
}

void RuntimeCore::flush_finished(int worker) {
  std::int64_t& finished = worker_locals_[worker].finished;
  if (finished == 0) return;
  if (pending_.fetch_sub(finished, std::memory_order_acq_rel) == finished) pending_.notify_all();
  finished = 0;
}

void RuntimeCore::worker_idle(int worker) { flush_finished(worker); }

bool RuntimeCore::pull_work(int worker) {
  if (!placement_) return false;
  Task* task = placement_->pull(0);
  if (!task) return false;
  task->node = 0;
  if (task->add_count != 0) rename_remote_adds(task, worker);
  placement_->cpu_queued(task->expected_ns);
  stage_and_dispatch(task, worker);  // onto this worker's deque once its data is home
  return true;
}

Task* RuntimeCore::pull_for_device(int node) {
  Task* task = placement_->pull(node);
  if (task) {
    task->node = node;
    if (task->add_count != 0) rename_remote_adds(task, -1);
  }
  return task;
}

void RuntimeCore::worker_started(int) {}

void RuntimeCore::worker_stopping(int worker) { flush_finished(worker); }

void RuntimeCore::record_failure(std::shared_ptr<const Failure> failure) {
  std::lock_guard<std::mutex> guard(failures_mutex_);
  failures_.push_back(std::move(failure));
}

void RuntimeCore::report_misuse(std::string message) {
  std::fprintf(stderr, "versa: %s\n", message.c_str());
  std::lock_guard<std::mutex> guard(failures_mutex_);
  misuses_.push_back(std::move(message));
}

Task* RuntimeCore::acquire_host(AccessRecord& record) {
  if (!record.handle)
    throw std::invalid_argument("acquire: empty handle (default-constructed or moved-from)");
  const int worker = workers_->current_worker();
  if (worker >= 0)
    throw std::logic_error(
        "acquire() called inside a task: it would block a worker; give the "
        "handle to the task as an access instead");
  Task* task = new (task_pool_.allocate(-1)) Task;
  task->name = "host acquire";
  task->host_access = true;
  if (!devices_.empty()) prepare_for_devices(task);
  task->access_count = 1;
  task->accesses = reinterpret_cast<AccessRecord*>(task->inline_records);
  task->accesses[0] = record;
  AccessRecord& access = task->accesses[0];
  bool flush_first;
  access.required_version = access.handle->register_access(access.mode, flush_first);
  access.layout = access.handle->layout();
  access.handle->host_view_opened();
  if (flush_first) submit_flush(access.handle, access.required_version - 1, -1);
  // The main program's additions go straight into the data, holding the exclusive flag.
  if (access.mode == AccessMode::add) access.add_role = AddRole::needs_flag;
  task->exclusive_count = is_unordered(access.mode) ? 1 : 0;
  if (try_make_ready(task, -1)) schedule(task, -1);
  while (!task->host_ready.load(std::memory_order_acquire)) task->host_ready.wait(false);
  if (const std::string* error =
          devices_.empty() ? nullptr : task->staging_error().load(std::memory_order_acquire)) {
    const std::string message = "acquire of " + quoted_handle(access.handle) + ": " + *error;
    release_host(task);
    throw std::runtime_error(message);
  }
  if (access.mode != AccessMode::write_only) {
    if (std::shared_ptr<const Failure> cause = access.handle->shared_poison()) {
      release_host(task);
      throw TaskFailure(cause->task_name, cause->exception, cause->message,
                        cancelled_.load(std::memory_order_relaxed));
    }
  } else {
    access.handle->set_poison(nullptr);
  }
  access.data = access.handle->data();
  record = access;
  return task;
}

void RuntimeCore::release_host(Task* ticket) {
  HandleState* handle = ticket->accesses[0].handle;
  finish_accesses(ticket, -1);
  handle->host_view_closed();
  destroy_task(ticket, -1);
}

void RuntimeCore::sync() {
  const int worker = workers_->current_worker();
  Task* task = worker >= 0 ? this_thread_task : nullptr;
  if (task) {
    // Help: run other ready tasks until the children are done.
    while (task->children.load(std::memory_order_acquire) != 0) {
      if (!workers_->run_one(worker)) std::this_thread::yield();
    }
    return;
  }
  for (std::uint32_t c; (c = root_.children.load(std::memory_order_acquire)) != 0;)
    root_.children.wait(c);
}

void RuntimeCore::wait_for_pending() {
  // Short waits are common (a phase of small tasks) and a futex wake-up costs tens of
  // microseconds on virtual machines, so poll briefly, yielding the core, before sleeping.
  const auto poll_until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
  while (pending_.load(std::memory_order_acquire) != 0 &&
         std::chrono::steady_clock::now() < poll_until)
    std::this_thread::yield();
  for (std::int64_t p; (p = pending_.load(std::memory_order_acquire)) != 0;) pending_.wait(p);
}

void RuntimeCore::wait_all() {
  if (workers_->current_worker() >= 0)
    throw std::logic_error("wait_all() called inside a task: use spawn() and sync() instead");
  wait_for_pending();
  // Results are readable in the user's memory after wait_all, and no partial is left.
  flush_all_partials();
  partials_.trim();
  if (mover_) mover_->write_back_all();
  std::vector<std::shared_ptr<const Failure>> failures;
  std::vector<std::string> misuses;
  {
    std::lock_guard<std::mutex> guard(failures_mutex_);
    failures.swap(failures_);
    misuses.swap(misuses_);
  }
  const std::uint64_t cancelled = cancelled_.exchange(0);
  for (const auto& failure : failures) failure->reported.store(true, std::memory_order_release);
  for (std::size_t i = 1; i < failures.size(); ++i)
    std::fprintf(stderr, "versa: task '%s' also failed: %s\n", failures[i]->task_name.c_str(),
                 failures[i]->message.c_str());
  if (!failures.empty())
    throw TaskFailure(failures[0]->task_name, failures[0]->exception, failures[0]->message,
                      cancelled);
  if (!misuses.empty()) throw std::logic_error(misuses[0]);
}

}  // namespace versa::detail
