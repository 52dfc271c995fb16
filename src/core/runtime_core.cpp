#include "core/runtime_core.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "base/names.hpp"
#include "core/task_validation.hpp"
#include "data/layout_check.hpp"
#include "device/device_registry.hpp"
#include "versa/error.hpp"

namespace versa::detail {

namespace {

std::atomic<std::uint64_t> next_runtime_id{1};

// One-entry cache of the last interned name, per thread and runtime: submitting many tasks with
// the same name costs a length check and a memcmp instead of a locked hash lookup.
struct NameCache {
  std::uint64_t runtime = 0;
  std::string_view name;  // points into the runtime's name table
};
thread_local NameCache last_name;

// Task names are a few characters: compared a word at a time in line, which costs less than
// the call to memcmp that string_view's comparison makes, or a loop over the characters (both
// a few percent of a fine-grained task's time). Words that overlap cover every length without a
// loop over the tail.
bool same_text(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  const auto same = [x, y]<class Word>(Word, std::size_t at) {
    Word u;
    Word v;
    std::memcpy(&u, x + at, sizeof(Word));
    std::memcpy(&v, y + at, sizeof(Word));
    return u == v;
  };
  if (n >= 8) {
    for (std::size_t at = 0; at + 8 < n; at += 8)
      if (!same(std::uint64_t{}, at)) return false;
    return same(std::uint64_t{}, n - 8);
  }
  if (n >= 4) return same(std::uint32_t{}, 0) && same(std::uint32_t{}, n - 4);
  for (std::size_t i = 0; i < n; ++i)
    if (x[i] != y[i]) return false;
  return true;
}

int worker_count(const Config& config, const Topology& topology) {
  return config.cpu_workers > 0 ? config.cpu_workers : topology.cores();
}

// The calling thread's slot comes beside at least one worker thread, which runs the tasks while
// the caller submits or holds a handle.
bool has_caller_slot(const Config& config, const Topology& topology) {
  return config.caller_runs_tasks && worker_count(config, topology) >= 2;
}

// Config::submission_window resolved: -1 is 64 per worker (as libgomp's limit of queued tasks).
std::size_t submission_window(const Config& config, const Topology& topology) {
  if (config.submission_window >= 0) return static_cast<std::size_t>(config.submission_window);
  return 64 * static_cast<std::size_t>(worker_count(config, topology));
}

}  // namespace

RuntimeCore::RuntimeCore(Config config)
    : id_(next_runtime_id.fetch_add(1)),
      config_(std::move(config)),
      diagnostics_(config_.diagnostics, config_.label),
      failures_(diagnostics_),
      task_pool_(worker_count(config_, topology_)),
      trace_(!config_.trace_file.empty(), worker_count(config_, topology_)),
      handles_(std::make_shared<HandleRegistry>()),
      dot_(config_.dot_file.empty() ? nullptr
                                    : std::make_unique<DotRecorder>(
                                          worker_count(config_, topology_), config_.dot_times)),
      tracker_(worker_count(config_, topology_),
               config_.track_tasks || config_.stall_report_seconds > 0, dot_.get()),
      renaming_(config_.rename_memory_limit),
      scheduler_(worker_count(config_, topology_), task_pool_, trace_, failures_, reductions_,
                 renaming_, tracker_, intern_name("reduction flush"),
                 has_caller_slot(config_, topology_), submission_window(config_, topology_),
                 config_.locality),
      reductions_(config_.reduction_memory_limit, failures_, scheduler_) {
  open_devices();
  if (config_.task_statistics || config_.print_statistics) {
    task_statistics_ = std::make_unique<TaskStatisticsLog>(scheduler_.workers() + nodes() - 1);
    scheduler_.set_task_statistics(task_statistics_.get());
    if (dispatch_) dispatch_->set_task_statistics(task_statistics_.get());
  }
  if (!config_.quiet) std::fprintf(stderr, "%s\n", summary_.c_str());
  scheduler_.set_defer_registration(config_.defer_registration);
  scheduler_.start(config_.pin_workers, topology_);
  if (config_.defer_registration) handles_->set_runtime(this);
  start_diagnostics();
}

void RuntimeCore::start_diagnostics() {
  std::vector<std::string> node_names(1, "host");
  for (int node = 1; node < nodes(); ++node) node_names.push_back(dispatch_->node_name(node));
  if (dot_) dot_->set_node_names(node_names);
  stall_report_ = std::make_unique<StallReport>(*handles_, tracker_, std::move(node_names));
  if (config_.stall_report_seconds <= 0) return;
  StallWatchdog::Probe probe;
  probe.finished = [this] { return tracker_.activity().finished_count(); };
  probe.pending = [this] {
    return scheduler_.pending() > 0 || tracker_.live().host_access_waiting();
  };
  probe.describe = [this](double seconds) {
    char header[64];
    std::snprintf(header, sizeof header, ": stall: no task has finished for %.1f s", seconds);
    return stall_report_->describe(config_.label + header, scheduler_.pending());
  };
  // Straight to stderr without a hook: a stalled program never reaches the destructor, where
  // the other messages are written.
  probe.emit = [hook = config_.diagnostics](const std::string& report) {
    if (hook) {
      hook(report);
    } else {
      std::fprintf(stderr, "%s", report.c_str());
    }
  };
  watchdog_ = std::make_unique<StallWatchdog>(config_.stall_report_seconds, std::move(probe));
}

void RuntimeCore::open_devices() {
  const int cpus = scheduler_.workers();
  summary_ = config_.label + ": " + std::to_string(cpus) + " CPU worker" + (cpus == 1 ? "" : "s") +
             " (" + topology_.summary() + ")";
  for (const auto& requested : config_.other_devices) {
    DeviceKind kind;
    if (!find_device_kind(requested.first, kind))
      throw std::invalid_argument("Config::other_devices names '" + requested.first +
                                  "', which is no registered device kind");
  }
  std::vector<std::unique_ptr<Device>> devices;
  for (const DeviceBackend& kind : device_kinds())
    if (kind.open) summary_ += "; " + kind.open(config_, devices);
  if (devices.empty()) return;
  dispatch_ = std::make_unique<DeviceDispatch>(
      std::move(devices), cpus, config_.device_tasks_per_stream, config_.device_serial_types,
      config_.perf_model_file, scheduler_, reductions_, trace_);
  if (!dispatch_->perf_model_note().empty()) summary_ += "; " + dispatch_->perf_model_note();
  scheduler_.set_devices(dispatch_.get());
  reductions_.set_devices(dispatch_.get());
}

RuntimeCore::~RuntimeCore() {
  scheduler_.wait_for_pending();
  handles_->set_runtime(nullptr);  // nothing is queued any more; handles may outlive us
  try {
    apply_all_partials();
    end_renamings(true);      // handles may outlive us
    retire_unused_handles();  // one whose view outlives the runtime stays allocated
  } catch (const std::exception& e) {
    diagnostics_.report(e.what());
  }
  if (watchdog_) watchdog_->stop();
  if (config_.print_statistics) print_statistics();
  if (dispatch_)
    for (std::string& error : dispatch_->shutdown()) diagnostics_.report(std::move(error));
  scheduler_.stop();
  write_files();
}

void RuntimeCore::write_files() {
  if (trace_.enabled()) {
    try {
      trace_.write(config_.trace_file);
    } catch (const std::exception& e) {
      diagnostics_.report(e.what());
    }
  }
  if (dot_) {
    try {
      dot_->write(config_.dot_file);
    } catch (const std::exception& e) {
      diagnostics_.report(e.what());
    }
  }
}

const std::shared_ptr<HostPins>& RuntimeCore::host_pins() const {
  static const std::shared_ptr<HostPins> none;
  return dispatch_ ? dispatch_->host_pins() : none;
}

HandleState* RuntimeCore::create_handle(const void* data, Layout layout, std::string name) {
  const std::size_t elements = layout.span();
  if (!data && layout.rows * layout.cols != 0)
    throw std::invalid_argument(
        "cannot register " + (name.empty() ? "a handle" : "'" + name + "'") +
        ": null data pointer for " + std::to_string(elements) + " elements");
  check_layout(layout, name);
  auto* handle = new HandleState(const_cast<void*>(data), layout, std::move(name), this, nodes());
  handle->set_registry(handles_, handles_->next_id());
  if (dot_) dot_->handle_created(handle->id(), handle->name());
  handles_->add(handle->id(), handle);
  // Copies from pageable memory go through a bounce buffer and block the copying thread: the
  // handle's memory is pinned before its first copy (DataMover::start_fill) unless it is smaller
  // than Config::auto_pin_bytes, or lies in a range pinned already (a TiledMatrix pins its whole
  // matrix; its tiles' ranges overlap, which CUDA would refuse). Not here: pinning costs about
  // as much as a copy, and data that tasks on devices only make and use (declared zero, without
  // write-back) is never copied.
  const std::shared_ptr<HostPins>& pins = host_pins();
  ReplicaSet* replicas = handle->replicas();
  if (pins && replicas && config_.auto_pin_bytes != 0 && layout.bytes() >= config_.auto_pin_bytes) {
    MutexLock guard(replicas->mutex());
    replicas->pin_before_first_copy(pins, elements * layout.element_size);
  }
  return handle;
}

HandleState* RuntimeCore::create_scratch(Layout layout, std::string name) {
  check_layout(layout, name);
  auto memory = std::make_unique<ScratchMemory>(layout.bytes(), scratch_bytes_);
  HandleState* handle = create_handle(memory->data(), layout, std::move(name));
  handle->own(std::move(memory));
  // Nobody reads the memory but through the runtime: devices make their copies of the zeros
  // without a copy over the host link, and keep what they make there.
  handle->set_write_back(false);
  if (ReplicaSet* replicas = handle->replicas()) {
    MutexLock guard(replicas->mutex());
    replicas->declare_host_zero();
  }
  return handle;
}

const char* RuntimeCore::intern_name(std::string_view name) {
  if (last_name.runtime == id_ && same_text(last_name.name, name)) return last_name.name.data();
  return intern_new_name(name);
}

const char* RuntimeCore::intern_new_name(std::string_view name) {
  MutexLock guard(names_mutex_);
  const std::string& stored = *names_.emplace(name).first;
  last_name = {id_, stored};
  return stored.c_str();
}

void RuntimeCore::keep_alive(const std::shared_ptr<const TaskTypeBase>& type) {
  if (keeps(*type)) return;
  MutexLock guard(types_mutex_);
  if (std::find(types_.begin(), types_.end(), type) == types_.end()) types_.push_back(type);
  type->registered_with.store(id_, std::memory_order_release);
}

void RuntimeCore::submit(const TaskDesc& desc) {
  const int worker = scheduler_.current_worker();
  Task* parent = scheduler_.parent_for(desc.is_child, worker);
  validate_task(desc, parent, scheduler_.root(), dispatch_.get());
  scheduler_.submit(desc, parent, worker);
}

Task* RuntimeCore::acquire_host(AccessRecord& record) {
  if (!record.handle)
    throw std::invalid_argument("acquire: empty handle (default-constructed or moved-from)");
  if (scheduler_.in_task_body())
    throw std::logic_error(
        "acquire() called inside a task: it would block a worker; give the "
        "handle to the task as an access instead");
  refuse_acquire_behind_own_view(*record.handle, record.mode);
  // The view is of the user's own memory.
  scheduler_.bring_home(*record.handle);
  std::uint64_t registered_then = 0;
  Task* task = scheduler_.submit_host_access(record, &registered_then);
  AccessRecord& access = task->accesses[0];
  if (const std::string* error =
          dispatch_ ? task->staging_error().load(std::memory_order_acquire) : nullptr) {
    HandleState& handle = *access.handle;
    CopyFailure failure("acquire", handle.name(), dispatch_->holder_name(handle), *error);
    release_host(task);
    throw failure;
  }
  if (reads_contents(access.mode)) {
    if (std::shared_ptr<const Failure> cause =
            access.handle->poison_before(task->progress(0).required_version)) {
      release_host(task);
      throw TaskFailure(cause->task_name, cause->exception, cause->message, failures_.cancelled());
    }
  } else if (overwrites(access.mode)) {
    access.handle->clear_poison(task->progress(0).required_version);
  }
  access.data = access.handle->data();
  record = access;
  open_views_.opened(task, registered_then);
  return task;
}

void RuntimeCore::refuse_waiting_on_own_views(bool tasks_done) {
  if (!open_views_.any()) return;
  if (!tasks_done) scheduler_.register_deferred_tasks();  // tasks submitted after a view
  open_views_.for_each_of_this_thread([&](const OpenViews::View& view) {
    const AccessRecord& access = view.ticket->accesses[0];
    HandleState& instance = *access.handle;
    HandleState& root = *instance.root();
    const char* behind = nullptr;
    if (!tasks_done) {
      if (instance.waits_behind_view(access.mode, view.ticket->progress(0).required_version,
                                     view.registered_then))
        behind = "a task submitted after it waits for it";
    } else if (root.homecoming_waits_for(&instance) && !stays_away(root)) {
      behind = "bringing home what a write_only renamed after it wrote waits for it";
    }
    if (behind)
      throw std::logic_error(
          std::string("wait_all() would wait for itself: this thread holds a view from acquire(") +
          to_string(access.mode) + ") of " + quoted_handle(root.name()) + ", and " + behind +
          ". Release the view first; the work behind it is kept and runs then");
  });
}

void RuntimeCore::refuse_acquire_behind_own_view(HandleState& root, AccessMode mode) {
  if (!open_views_.any()) return;
  scheduler_.register_deferred_tasks();
  open_views_.for_each_of_this_thread([&](const OpenViews::View& view) {
    const AccessRecord& access = view.ticket->accesses[0];
    HandleState& instance = *access.handle;
    if (instance.root() != &root) return;
    // Two reads share a run, unless an access of another run came between them.
    const bool waits =
        root.homecoming_waits_for(&instance) ||
        (&instance == &root &&
         (access.mode != AccessMode::read || mode != AccessMode::read ||
          instance.waits_behind_view(access.mode, view.ticket->progress(0).required_version,
                                     view.registered_then)));
    if (waits)
      throw std::logic_error(std::string("acquire(") + to_string(mode) + ") of " +
                             quoted_handle(root.name()) +
                             " would wait for itself: this thread holds a view from acquire(" +
                             to_string(access.mode) +
                             ") of it, which the new access would wait for. Release that view "
                             "first");
  });
}

void RuntimeCore::retire_replicas(HandleState& handle) {
  try {
    dispatch_->retire(handle);
  } catch (const std::exception& e) {
    report_misuse(std::string("while destroying a handle: ") + e.what());
  }
}

void RuntimeCore::end_renaming(HandleState& handle) {
  make_root_newest(handle);
  renaming_.forget(&handle);
}

// Data nobody reads at home (the memory dies with the handle, or the program said so) is
// dropped where it is, but where it is in host memory already: there, coming home is a copy in
// host memory, and the user's memory then holds what tasks wrote whether or not renaming moved it
// to a buffer of the runtime's (set_write_back).
bool RuntimeCore::stays_away(HandleState& handle) {
  return handle.destroyed_without_waiting() ||
         (!handle.writes_back() && !handle.newest_in_host_memory());
}

void RuntimeCore::make_root_newest(HandleState& handle) {
  HandleState* dropped = stays_away(handle) ? handle.drop_newest_instance() : nullptr;
  if (dropped)
    scheduler_.drop_instance(dropped);
  else
    scheduler_.bring_home(handle);
}

void RuntimeCore::end_renamings(bool shutting_down) {
  for (HandleState* root : renaming_.renamed_handles()) {
    if (root->released()) continue;  // retiring it drops its data (end_renaming)
    if (shutting_down) {
      end_renaming(*root);
      root->forget_renaming();
    } else if (!stays_away(*root)) {
      scheduler_.bring_home(*root);
    }
  }
}

void RuntimeCore::keep_until_unused(HandleState& handle) {
  MutexLock guard(kept_mutex_);
  kept_handles_.insert(&handle);
  any_kept_.store(true, std::memory_order_release);
}

void RuntimeCore::retire_released(const HandleState* handle) {
  {
    MutexLock guard(kept_mutex_);
    // Only the pointer's value is used: the handle may be gone.
    if (kept_handles_.erase(const_cast<HandleState*>(handle)) == 0)
      return;  // not kept yet, or in retire_unused_handles' hands
    any_kept_.store(!kept_handles_.empty(), std::memory_order_relaxed);
  }
  // Taken off the list, it is this thread's alone.
  HandleState* kept = const_cast<HandleState*>(handle);
  if (!retire_at_once(kept)) keep_until_unused(*kept);
}

void RuntimeCore::retire_unused_handles() {
  // Every wait_all passes here, and a handle is almost never kept: one load then.
  if (!any_kept_.load(std::memory_order_acquire)) return;
  std::unordered_set<HandleState*> kept;
  {
    MutexLock guard(kept_mutex_);
    kept.swap(kept_handles_);
    any_kept_.store(false, std::memory_order_relaxed);
  }
  // Retired outside the lock: retiring may copy data home.
  std::erase_if(kept, retire_if_unused);
  if (kept.empty()) return;
  MutexLock guard(kept_mutex_);
  kept_handles_.merge(kept);
  any_kept_.store(true, std::memory_order_relaxed);
}

void RuntimeCore::apply_all_partials() {
  for (;;) {
    const auto open_runs = reductions_.close_open_runs();
    if (open_runs.empty()) return;
    for (const auto& [handle, required] : open_runs) scheduler_.submit_flush(handle, required, -1);
    scheduler_.wait_for_pending();
  }
}

void RuntimeCore::wait_all() {
  if (scheduler_.in_task_body())
    throw std::logic_error("wait_all() called inside a task: use spawn() and sync() instead");
  refuse_waiting_on_own_views(false);
  scheduler_.wait_for_pending();
  // Results are readable in the user's memory after wait_all, and no partial is left.
  apply_all_partials();
  // Where data stays away is known once its tasks are done.
  refuse_waiting_on_own_views(true);
  end_renamings(false);
  reductions_.trim();
  if (dispatch_) dispatch_->write_back_all();
  // The pool of renamed buffers is trimmed last: after the write-backs, which also free the
  // device buffers of renamed instances dropped while a copy of theirs was in flight, and after
  // the handles retired here have given theirs back.
  retire_unused_handles();
  renaming_.trim();
  failures_.rethrow();
}

std::vector<TaskStatistics> RuntimeCore::task_statistics() const {
  return task_statistics_ ? task_statistics_->snapshot() : std::vector<TaskStatistics>{};
}

std::vector<DeviceStatistics> RuntimeCore::statistics() const {
  std::vector<DeviceStatistics> nodes(1);
  nodes[0].name = "cpu";
  if (dispatch_) dispatch_->add_statistics(nodes);
  return nodes;
}

void RuntimeCore::print_statistics() const {
  std::fprintf(stderr, "%s: statistics%s\n", config_.label.c_str(),
               !dispatch_ ? " (tasks are counted per device when accelerators are present)" : "");
  std::fprintf(stderr, "  %-28s %10s %14s %14s %14s %12s %10s %12s %12s\n", "device", "tasks",
               "MiB to device", "MiB to host", "MiB from peers", "MiB zeroed", "evictions",
               "copies s", "kernels s");
  for (const DeviceStatistics& d : statistics())
    std::fprintf(stderr, "  %-28s %10llu %14.1f %14.1f %14.1f %12.1f %10llu %12.3f %12.3f\n",
                 d.name.c_str(), static_cast<unsigned long long>(d.tasks),
                 static_cast<double>(d.bytes_to_device) / (1 << 20),
                 static_cast<double>(d.bytes_to_host) / (1 << 20),
                 static_cast<double>(d.bytes_from_peers) / (1 << 20),
                 static_cast<double>(d.bytes_zeroed) / (1 << 20),
                 static_cast<unsigned long long>(d.evictions), d.transfer_seconds,
                 d.kernel_seconds);
  std::fprintf(stderr, "  %-28s %-10s %10s %14s %14s %14s\n", "task type", "on", "tasks",
               "kernels s", "median ms", "MiB moved");
  for (const TaskStatistics& t : task_statistics())
    std::fprintf(stderr, "  %-28s %-10s %10llu %14.3f %14.3f %14.1f\n", t.task_type.c_str(),
                 t.device_kind.c_str(), static_cast<unsigned long long>(t.tasks), t.kernel_seconds,
                 t.median_kernel_seconds * 1e3, static_cast<double>(t.bytes_moved) / (1 << 20));
}

}  // namespace versa::detail
