// The runtime behind versa::Runtime: owns and wires the parts (scheduler, reduction engine,
// device dispatch, failure log, diagnostics), registers handles, gives the main program host
// access to data, and runs the shutdown sequence. The work itself is done by the parts.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/diagnostics.hpp"
#include "base/failure_log.hpp"
#include "base/mutex.hpp"
#include "base/task.hpp"
#include "base/thread_annotations.hpp"
#include "core/device_dispatch.hpp"
#include "core/dot_recorder.hpp"
#include "core/open_views.hpp"
#include "core/scheduler.hpp"
#include "core/stall_report.hpp"
#include "core/stall_watchdog.hpp"
#include "core/task_pool.hpp"
#include "core/task_statistics.hpp"
#include "core/task_tracker.hpp"
#include "core/trace.hpp"
#include "cpu/topology.hpp"
#include "data/handle_registry.hpp"
#include "data/reduction_engine.hpp"
#include "data/scratch_memory.hpp"
#include "versa/config.hpp"
#include "versa/statistics.hpp"
#include "versa/task_type.hpp"

namespace versa::detail {

class RuntimeCore final : public HandleHost {
 public:
  explicit RuntimeCore(Config config);
  ~RuntimeCore();

  int cpu_workers() const { return scheduler_.workers(); }
  // Memory nodes: 1 + the number of accelerators.
  int nodes() const { return dispatch_ ? dispatch_->nodes() : 1; }
  int gpus() const { return dispatch_ ? dispatch_->devices_of(DeviceKind::cuda) : 0; }
  std::vector<DeviceStatistics> statistics() const;
  std::vector<TaskStatistics> task_statistics() const;
  // The one-line topology summary printed at start-up.
  const std::string& summary() const { return summary_; }
  std::size_t task_memory_bytes() const { return task_pool_.bytes_reserved(); }
  // Bytes of reduction partials: host buffers (in use or pooled) and partials on devices.
  std::size_t reduction_memory_bytes() const { return reductions_.memory_bytes(); }
  // Bytes of buffers of renamed write_only accesses (in use or pooled).
  std::size_t rename_memory_bytes() const { return renaming_.memory_bytes(); }
  std::uint64_t renamed_accesses() const { return renaming_.renamed_accesses(); }
  // The set of host ranges this runtime pinned through the CUDA backend; null when no GPU is
  // in use. Outlives the runtime in the handles and PinnedHostMemory objects that hold it.
  const std::shared_ptr<HostPins>& host_pins() const;

  HandleState* create_handle(const void* data, Layout layout, std::string name);
  // A handle over zeroed memory of its own (Runtime::scratch).
  HandleState* create_scratch(Layout layout, std::string name);
  // Bytes of the scratch handles alive, kept ones included.
  std::size_t scratch_memory_bytes() const {
    return scratch_bytes_->load(std::memory_order_relaxed);
  }
  void submit(const TaskDesc& desc);
  // Runtime::start_child and submit_child.
  // The name is interned first: it may allocate, and throw, before a record exists.
  StartedChild start_child(std::string_view name, InvokeFn invoke, DestroyFn destroy) {
    Task* task = scheduler_.start_plain_child(intern_name(name), invoke, destroy);
    return task ? StartedChild{task, task->closure} : StartedChild{};
  }
  void submit_child(Task* task) { scheduler_.submit_plain_child(task); }
  const char* intern_name(std::string_view name);
  void keep_alive(const std::shared_ptr<const TaskTypeBase>& type);
  // Whether this runtime is known to keep `type`: it was the last to register it.
  bool keeps(const TaskTypeBase& type) const {
    return type.registered_with.load(std::memory_order_acquire) == id_;
  }
  Task* acquire_host(AccessRecord& record);
  void release_host(Task* ticket) {
    open_views_.closed(ticket);
    scheduler_.end_host_access(ticket);
  }
  void sync() { scheduler_.sync(); }
  std::size_t surplus_tasks() const { return scheduler_.surplus_tasks(); }
  // Throws std::logic_error where wait_all would wait for a view from acquire() that the
  // calling thread holds: before waiting for tasks, where one of them waits for the view, and
  // once they are done (`tasks_done`), where bringing renamed data home would. versa::mpi asks
  // first, before its collective step.
  void refuse_waiting_on_own_views(bool tasks_done);
  void wait_all();
  // Runtime::describe_pending.
  std::string describe_pending() {
    return stall_report_->describe(config_.label + ": pending work", scheduler_.pending());
  }

  // HandleHost
  void report_misuse(std::string message) override { failures_.record_misuse(std::move(message)); }
  void retire_replicas(HandleState& handle) override;
  void settle(HandleState& handle) override { scheduler_.settle(handle); }
  void end_renaming(HandleState& handle) override;
  void register_deferred_tasks() override { scheduler_.register_deferred_tasks(); }
  void keep_until_unused(HandleState& handle) override;
  void retire_released(const HandleState* handle) override;

 private:
  // Throws std::logic_error where acquiring `root` in `mode` would wait for a view of it that
  // the calling thread holds.
  void refuse_acquire_behind_own_view(HandleState& root, AccessMode mode);
  // Opens the devices the configuration asks for; sets dispatch_ when there is any.
  void open_devices();
  // Applies every open run of adds and waits (wait_all, shutdown).
  void apply_all_partials();
  // Whether a renamed handle's newest data stays where it is, rather than coming home, when
  // its renaming ends: scratch data, and data that does not write back and is on a device.
  bool stays_away(HandleState& handle);
  // Makes a renamed handle's root its newest instance again, none of its accesses pending: by
  // bringing the newest instance's data home or, where it stays away, dropping it.
  void make_root_newest(HandleState& handle);
  // The renamed handles at wait_all (`shutting_down` false): their data comes home, but where
  // it stays away (HandleBase::set_write_back). At shutdown every root is made the newest and
  // forgets its renaming: a handle may outlive the runtime. Handles the program destroyed while
  // their tasks ran are left to their retirement (end_renaming).
  void end_renamings(bool shutting_down);
  // Writes statistics() as a table on stderr (Config::print_statistics).
  void print_statistics() const;
  // Sets up what describes pending work (after the devices are open: it names them) and starts
  // the stall watchdog when Config::stall_report_seconds asks for it.
  void start_diagnostics();
  // intern_name for a name that is not the cached one: out of line, so that the cached case
  // saves no registers.
  [[gnu::noinline]] const char* intern_new_name(std::string_view name);
  // Writes the files asked for at shutdown (trace, DOT); errors go to the diagnostics.
  void write_files();
  // Destroys the handles kept by keep_until_unused that are no longer used (wait_all, shutdown).
  void retire_unused_handles();

  const std::uint64_t id_;  // distinguishes runtimes in thread-local caches
  Config config_;
  Topology topology_;
  Diagnostics diagnostics_;
  FailureLog failures_;
  TaskPool task_pool_;
  TraceRecorder trace_;
  // Every handle of this runtime, for the diagnostics; shared with the handles.
  const std::shared_ptr<HandleRegistry> handles_;
  std::unique_ptr<DotRecorder> dot_;  // null unless Config::dot_file
  TaskTracker tracker_;

  Mutex names_mutex_;
  // Node-based: the strings' c_str() stay put.
  std::unordered_set<std::string> names_ VERSA_GUARDED_BY(names_mutex_);
  Mutex types_mutex_;
  std::vector<std::shared_ptr<const TaskTypeBase>> types_ VERSA_GUARDED_BY(types_mutex_);

  // Handles destroyed while a view on them was alive, and scratch handles and tokens destroyed
  // with accesses pending (keep_until_unused).
  Mutex kept_mutex_;
  // A set: the thread that ends a kept handle's last access looks it up (retire_released).
  std::unordered_set<HandleState*> kept_handles_ VERSA_GUARDED_BY(kept_mutex_);
  std::atomic<bool> any_kept_{false};  // kept_handles_ is not empty (set under kept_mutex_)
  OpenViews open_views_;

  // Shared with the scratch handles' memory, which may outlive the runtime.
  const ScratchMemory::Counter scratch_bytes_ = std::make_shared<std::atomic<std::size_t>>(0);
  WriteRenaming renaming_;
  Scheduler scheduler_;
  ReductionEngine reductions_;
  // Accelerators; null when there are none, and then nothing of it is on any task's path.
  std::unique_ptr<DeviceDispatch> dispatch_;
  // Per task type figures; null unless Config::task_statistics or print_statistics.
  std::unique_ptr<TaskStatisticsLog> task_statistics_;
  std::string summary_;
  std::unique_ptr<StallReport> stall_report_;
  // Null unless Config::stall_report_seconds; last, so that it stops before anything it reads.
  std::unique_ptr<StallWatchdog> watchdog_;
};

}  // namespace versa::detail
