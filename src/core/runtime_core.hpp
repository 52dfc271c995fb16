// The runtime behind versa::Runtime: task life cycle (create, register, park, ready, run,
// finish), failure propagation, host access and the shutdown sequence.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/data_mover.hpp"
#include "core/device.hpp"
#include "core/device_worker.hpp"
#include "core/failure.hpp"
#include "core/partial_pool.hpp"
#include "core/perf_model.hpp"
#include "core/placement.hpp"
#include "core/task.hpp"
#include "core/task_pool.hpp"
#include "core/trace.hpp"
#include "cpu/topology.hpp"
#include "cpu/worker_pool.hpp"
#include "versa/config.hpp"
#include "versa/statistics.hpp"
#include "versa/task_type.hpp"

namespace versa::detail {

class RuntimeCore final : public TaskRunner,
                          public HandleRegistry,
                          public DeviceTaskHost,
                          public FillListener {
 public:
  explicit RuntimeCore(Config config);
  ~RuntimeCore();

  int cpu_workers() const { return workers_->size(); }
  // Memory nodes: 1 + the number of accelerators.
  int nodes() const { return 1 + static_cast<int>(devices_.size()); }
  std::vector<DeviceStatistics> statistics() const;
  // Writes statistics() as a table on stderr (Config::print_statistics).
  void print_statistics() const;
  // The one-line topology summary printed at start-up.
  const std::string& summary() const { return summary_; }
  std::size_t task_memory_bytes() const { return task_pool_.bytes_reserved(); }

  HandleState* create_handle(const void* data, Layout layout, std::string name);
  void submit(const TaskDesc& desc);
  const char* intern_name(std::string_view name);
  void keep_alive(const std::shared_ptr<const TaskTypeBase>& type);
  Task* acquire_host(AccessRecord& record);
  void release_host(Task* ticket);
  void sync();
  void wait_all();

  // Records a misuse detected away from the call that caused it (e.g. a handle destroyed while
  // in use); wait_all rethrows it as std::logic_error.
  void report_misuse(std::string message) override;
  void retire_replicas(HandleState& handle) override;
  void complete_reductions(HandleState& handle) override;

  // Bytes of reduction partials: host buffers (in use or pooled) and partials on devices.
  std::size_t reduction_memory_bytes() const;

  // The set of host ranges this runtime pinned through the CUDA backend; null when no GPU is
  // in use. Outlives the runtime in the handles and PinnedHostMemory objects that hold it.
  const std::shared_ptr<HostPins>& host_pins() const { return host_pins_; }

  // DeviceTaskHost
  bool cancel_if_poisoned(Task& task) override;
  void stage(Task& task, int node) override;
  void device_task_ended(Task& task, int node, OperationResult result) override;
  void device_refused(Task& task, int node, const std::string& why) override;
  Task* pull_for_device(int node) override;

  // FillListener: a copy a staging task waited for has landed.
  void fill_landed(void* context, const std::string& error) override;

  // TaskRunner
  void run_task(Task* task, int worker) override;
  void worker_idle(int worker) override;
  bool pull_work(int worker) override;
  void worker_started(int worker) override;
  void worker_stopping(int worker) override;

 private:
  struct alignas(64) WorkerLocal {
    std::int64_t finished = 0;  // tasks finished and not yet subtracted from pending_
  };

  void validate(const TaskDesc& desc, const Task* parent) const;
  void check_reduction(const TaskDesc& desc, const AccessRecord& access) const;
  Task* create_task(const TaskDesc& desc, int worker);
  bool try_make_ready(Task* task, int worker);
  bool take_exclusive_flags(Task* task, int worker);

  // Reductions (runtime_reductions.cpp).
  // Registers and schedules the flush that applies `handle`'s partials at version `required`.
  void submit_flush(HandleState* handle, std::uint64_t required, int worker);
  // Decides how each undecided add access of a ready task runs: in place when the handle's
  // exclusive flag is free, else renamed while the budget allows, else waiting for the flag.
  void claim_add_accesses(Task* task, int worker);
  // Once the task's node is known: an add holding the flag whose data is not valid there is
  // renamed instead (when the budget allows), so that the data does not move for it.
  void rename_remote_adds(Task* task, int worker);
  // Gives the task's renamed accesses that run on the host their partial buffers.
  void prepare_host_partials(Task* task);
  // Puts a finished renamed access's partial in its node's slot, merging with the occupant.
  void attach_partial(Task* task, AccessRecord& access);
  // Where a flush applies the partials: the device that holds the data and every partial when
  // there is one (nothing moves), else the host (node 0). Sets up a device flush.
  int flush_node(Task& task);
  void device_flush_ended(Task& task, int node, const OperationResult& result);
  // The body of a flush task: merges the partials, brings device ones home and applies them.
  void apply_partials(Task* task);
  // Flushes every handle whose partials are not yet applied, and waits (wait_all, shutdown).
  void flush_all_partials();
  void wait_for_version(HandleState& handle, std::uint64_t version, int worker);
  void poison_outputs(Task* task, const std::shared_ptr<const Failure>& cause);
  void poison_reduction(Task* task, HandleState& handle, const std::string& error);
  // Frees a device partial that is done with and returns its bytes to the budget.
  void drop_device_partial(int node, void* partial, std::size_t bytes);
  void schedule(Task* task, int worker);
  void open_devices();
  void prepare_for_devices(Task* task);
  void forget_exploration(Task& task);
  void place(Task* task, int worker);
  void stage_and_dispatch(Task* task, int worker);
  void staging_failed(Task* task);
  void dispatch(Task* task, int worker);
  std::shared_ptr<const Failure> inherited_failure(Task* task);
  void fail_task(Task* task, std::exception_ptr error, std::string message, int worker);
  void wake(Waiter* waiter, int worker);
  void finish_accesses(Task* task, int worker);
  void finish_task(Task* task, int worker);
  void flush_finished(int worker);
  void destroy_task(Task* task, int worker);
  void record_failure(std::shared_ptr<const Failure> failure);
  void wait_for_pending();

  const std::uint64_t id_;  // distinguishes runtimes in thread-local caches
  Config config_;
  Topology topology_;
  TaskPool task_pool_;
  TraceRecorder trace_;
  std::vector<WorkerLocal> worker_locals_;  // each element owned by its worker thread

  // Tasks submitted and not yet finished, minus what workers have finished but not flushed.
  // Submissions add immediately (so the count can never reach zero early); workers subtract in
  // batches when they run out of work, so the line is not bounced once per task.
  std::atomic<std::int64_t> pending_{0};
  // Parent of the tasks spawned by the main program (outside any task).
  Task root_;

  std::mutex failures_mutex_;
  std::vector<std::shared_ptr<const Failure>> failures_;  // guarded by failures_mutex_
  std::vector<std::string> misuses_;                      // guarded by failures_mutex_
  std::atomic<std::uint64_t> cancelled_{0};

  std::mutex names_mutex_;
  std::unordered_set<std::string> names_;  // guarded by names_mutex_; node-based: stable c_str()
  std::mutex types_mutex_;
  std::vector<std::shared_ptr<const TaskTypeBase>> types_;  // guarded by types_mutex_

  // Accelerators (empty when none: then nothing below is used and CPU-only runs pay nothing).
  // Node n >= 1 is devices_[n - 1].
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<std::unique_ptr<NodeMemory>> memories_;
  std::unique_ptr<DataMover> mover_;
  PerfModel perf_model_;
  std::unique_ptr<PlacementPolicy> placement_;
  std::vector<std::unique_ptr<DeviceWorker>> device_workers_;
  std::vector<std::atomic<std::uint64_t>> tasks_per_node_;
  std::vector<std::atomic<double>> kernel_seconds_;  // per device node (index node - 1)
  std::string summary_;

  std::shared_ptr<HostPins> host_pins_;

  PartialPool partials_;
  const char* flush_name_ = nullptr;

  // Last: its threads start in its constructor and must see everything above initialised.
  std::unique_ptr<WorkerPool> workers_;
};

}  // namespace versa::detail
