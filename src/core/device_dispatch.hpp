// Where ready tasks run when the runtime has accelerators (DESIGN sections 2-4): placing each
// task on a memory node (PlacementPolicy), staging its data there (DataMover), and handing it
// to that node's queue — a CPU worker or a device worker — then recording how it went (the
// performance model, per-device statistics, the trace). Exists only in runtimes with devices.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/data_mover.hpp"
#include "core/device_worker.hpp"
#include "core/perf_model.hpp"
#include "core/placement.hpp"
#include "core/task_statistics.hpp"
#include "core/trace.hpp"
#include "data/host_pins.hpp"
#include "data/reduction_engine.hpp"
#include "device/device.hpp"
#include "versa/statistics.hpp"

namespace versa::detail {

class Scheduler;

class DeviceDispatch final : public DeviceTaskHost, public FillListener, public DevicePartials {
 public:
  // Takes over `devices` (at least one); `cpu_workers` CPU workers share the host node. Each
  // device keeps up to `tasks_per_stream` tasks launched per kernel stream and runs the tasks of
  // `serial_types` one after another (Config::device_tasks_per_stream, device_serial_types).
  // The performance model is read from and kept in `perf_model_file` (Config::perf_model_file,
  // see PerfModel::file_to_keep); a malformed file named there throws std::runtime_error.
  DeviceDispatch(std::vector<std::unique_ptr<Device>> devices, int cpu_workers,
                 int tasks_per_stream, const std::vector<std::string>& serial_types,
                 const std::string& perf_model_file, Scheduler& scheduler,
                 ReductionEngine& reductions, TraceRecorder& trace);
  // Destroys the device workers. shutdown() must have run, and the CPU workers, which read the
  // device workers' backlogs while they look for work, must have stopped.
  ~DeviceDispatch();
  DeviceDispatch(const DeviceDispatch&) = delete;
  DeviceDispatch& operator=(const DeviceDispatch&) = delete;

  // Memory nodes: the host and one per device.
  int nodes() const { return 1 + static_cast<int>(devices_.size()); }
  int devices_of(DeviceKind kind) const {
    return static_cast<int>(std::count_if(devices_.begin(), devices_.end(),
                                          [kind](const auto& d) { return d->kind() == kind; }));
  }
  // The pinned host ranges when a GPU is in use, else null.
  const std::shared_ptr<HostPins>& host_pins() const { return host_pins_; }

  // Records per task type (Config::task_statistics) from now on; recorder slots after the
  // CPU workers' are the devices'.
  void set_task_statistics(TaskStatisticsLog* log) { task_statistics_ = log; }

  // --- validation ---
  // Whether a task with these implementations and rule can run on some present node.
  bool runnable(const TaskDesc& desc) const;
  // The device kinds present, for messages: "cpu, emulated".
  std::string present_kinds() const { return placement_->present_kinds(); }
  // A device the task may run on whose code the reduction operator `ops` has no functions
  // for (a GPU, when it has no CUDA ones), or null.
  const Device* device_refusing(const TaskDesc& desc, const ReductionOps& ops) const;

  // --- the task life cycle ---
  // Fills the device fields of a new task (`desc` null: a flush or a host access).
  void adopt(Task& task, const TaskDesc* desc);
  // Sets the performance model's size key of a task whose accesses are registered: its work
  // hint (versa::work, TaskType::work), else the bytes of its data.
  void size(Task& task, const TaskDesc& desc);
  // Places a ready task and sends it on its way.
  void place(Task* task, int worker);
  // A CPU worker found nothing to do: gives it a pooled task if one suits the host.
  bool pull_for_cpu(int worker);
  // Whether pull_for_cpu would give a task now (asked by a CPU worker before it sleeps).
  bool cpu_work_pooled() const { return placement_->would_pull(0); }
  // A CPU task ran successfully in `seconds` / ended (ran, failed or was cancelled).
  void cpu_task_ran(Task& task, double seconds);
  void cpu_task_ended(Task& task) { placement_->cpu_done(task.expected_ns); }
  // The body of `task`, in flight on its device, starts or stops waiting for its children.
  void body_waiting(const Task& task, bool waiting) {
    device_workers_[task.node - 1]->body_waiting(waiting);
  }
  // A task placed to calibrate the model ends without a measurement there.
  void forget_exploration(Task& task);

  // --- data ---
  void write_back_all() { mover_->write_back_all(); }
  void retire(HandleState& handle) { mover_->retire(handle); }
  // The device that holds a valid copy of `handle` ("" when none does), for messages.
  std::string holder_name(HandleState& handle) { return mover_->holder_name(handle); }
  void drop_instance(HandleState* instance) { mover_->drop_instance(instance); }
  // At shutdown: writes everything home, frees device memory, stops the device workers, saves
  // the performance model. Returns what went wrong, one message each.
  std::vector<std::string> shutdown();
  // Where the performance model is kept and what was read from it, for the start-up summary;
  // "" when it is kept nowhere.
  const std::string& perf_model_note() const { return perf_model_note_; }
  // Entries 1.. of Runtime::statistics(); entry 0 (the CPU) gets its task count.
  void add_statistics(std::vector<DeviceStatistics>& nodes) const;

  // DeviceTaskHost
  bool cancel_if_poisoned(Task& task) override;
  void stage(Task& task) override;
  void device_task_ended(Task& task, int node, OperationResult result) override;
  void device_refused(Task& task, int node, const std::string& why) override;
  Task* pull_for_device(int node, bool resident_only) override;
  bool has_ancestor_on(const Task& task, int node) const override;

  // FillListener: a copy a staging task waited for has landed.
  void fill_landed(void* context, const std::string& error) override;

  // DevicePartials
  bool may_keep_partial(int node) override { return mover_->may_keep_partial(node); }
  std::string copy_partial_home(int node, void* host, const void* partial,
                                std::size_t bytes) override {
    return mover_->copy_partial_home(node, host, partial, bytes);
  }
  void free_partial(int node, void* partial, std::size_t bytes) override {
    mover_->free_partial(node, partial, bytes);
  }
  std::string merge_partials(int node, const ReductionOps& ops, void* into, const void* from,
                             std::size_t count) override {
    return devices_[node - 1]->merge_partials(ops, into, from, count);
  }
  bool can_apply_on(int node, const ReductionOps& ops) const override;
  std::size_t partial_bytes_on_devices() const override;
  const std::string& node_name(int node) const override { return devices_[node - 1]->name(); }

 private:
  // A run placed to calibrate the model was recorded (see the definition).
  void explored_run_recorded();
  DeviceKind kind_of(int node) const {
    return node == 0 ? DeviceKind::cpu : devices_[node - 1]->kind();
  }
  void stage_and_dispatch(Task* task, int worker);
  void staging_failed(Task* task);
  void dispatch(Task* task, int worker);
  // Reads the model from the file it is kept in (see PerfModel::file_to_keep), when there is
  // one, and says so in perf_model_note_.
  void keep_perf_model(const std::string& configured);

  Scheduler& scheduler_;
  ReductionEngine& reductions_;
  TraceRecorder& trace_;
  const int cpu_workers_;
  // Node n >= 1 is devices_[n - 1].
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<ImplementationSlot> slots_;  // per node: the implementation that runs there
  std::vector<std::unique_ptr<NodeMemory>> memories_;
  std::shared_ptr<HostPins> host_pins_;
  std::unique_ptr<DataMover> mover_;
  PerfModel perf_model_;
  std::string perf_model_file_;  // "" when kept nowhere
  std::string perf_model_note_;
  std::unique_ptr<PlacementPolicy> placement_;
  std::vector<std::unique_ptr<DeviceWorker>> device_workers_;
  std::vector<std::atomic<std::uint64_t>> tasks_per_node_;
  std::vector<std::atomic<double>> kernel_seconds_;  // per device node (index node - 1)
  TaskStatisticsLog* task_statistics_ = nullptr;
};

}  // namespace versa::detail
