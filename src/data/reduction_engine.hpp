// Reductions in the task life cycle (DESIGN section 4): deciding how each add access runs (in
// place holding the handle's exclusive flag, or renamed into a partial buffer), giving renamed
// accesses their buffers, merging partials per node as their tasks finish, and the flush that
// applies them to the handle's data before the next access of another mode.
//
// The scheduler calls it at the steps of a task's life; what it needs from devices (copying a
// partial home, merging on a device) it asks through DevicePartials, which the device dispatch
// implements, so this layer knows no device kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/failure_log.hpp"
#include "base/task.hpp"
#include "base/wait_list.hpp"
#include "data/handle_state.hpp"
#include "data/partial_pool.hpp"

namespace versa::detail {

// Whether `ops` has the functions that code of `slot` needs (CUDA ones for CUDA devices).
inline bool operator_runs_in(ImplementationSlot slot, const ReductionOps& ops) {
  return slot != ImplementationSlot::cuda || ops.runs_on_cuda();
}

// Reduction partials on devices, as the engine sees them.
class DevicePartials {
 public:
  // Whether `node` may keep one more partial: they cannot be evicted, so past a share of its
  // memory they go home at once.
  virtual bool may_keep_partial(int node) = 0;
  // Copies a dense partial of `bytes` from `node` into `host` and waits; "" or what failed.
  virtual std::string copy_partial_home(int node, void* host, const void* partial,
                                        std::size_t bytes) = 0;
  // Gives a partial's buffer back to `node`'s memory.
  virtual void free_partial(int node, void* partial, std::size_t bytes) = 0;
  // Merges `from` into `into` on `node` with `ops` and waits; "" or what failed.
  virtual std::string merge_partials(int node, const ReductionOps& ops, void* into,
                                     const void* from, std::size_t count) = 0;
  // Whether `node` can merge with `ops` in a device task (a flush there moves nothing).
  virtual bool can_apply_on(int node, const ReductionOps& ops) const = 0;
  // Bytes of partials held on devices; a device's name for messages.
  virtual std::size_t partial_bytes_on_devices() const = 0;
  virtual const std::string& node_name(int node) const = 0;

 protected:
  ~DevicePartials() = default;
};

class ReductionEngine {
 public:
  // `budget`: bytes of partials alive at once (Config::reduction_memory_limit).
  ReductionEngine(std::size_t budget, FailureLog& failures, Waker& waker)
      : partials_(budget), failures_(failures), waker_(waker) {}

  // Devices present (set once, before any task): null in CPU-only runtimes.
  void set_devices(DevicePartials* devices) { devices_ = devices; }

  // Decides how each undecided add access of a ready task runs: in place when the handle's
  // exclusive flag is free, else renamed while the budget allows, else waiting for the flag
  // (counted in task->exclusive_count).
  void claim_add_accesses(Task* task, int worker);
  // Once the task's node is known: an add holding the flag whose data is not valid there is
  // renamed instead (when the budget allows), so that the data does not move for it.
  void rename_remote_adds(Task* task, int worker);
  // Gives the task's renamed accesses that run on the host their partial buffers.
  void prepare_host_partials(Task* task);
  // Puts a finished renamed access's partial in its node's slot, merging with the occupant.
  void attach_partial(Task* task, std::uint32_t index);

  // Where a flush applies the partials: the device that holds the data and every partial when
  // it can apply them (nothing moves; the task is set up for it), else the host (0).
  int flush_node(Task& flush);
  // A flush that ran on device `node` has ended (`error` empty on success).
  void device_flush_ended(Task& flush, int node, const std::string& error);
  // The body of a flush on the host: merges the partials, brings device ones home, applies.
  void apply_partials(Task* flush);
  // A flush on the host that will not run (copying the data home failed): gives its partials
  // back, wherever they are, so that none is left for the handle's next run.
  void discard_partials(Task& flush);

  // Closes every open run of adds with partials (wait_all, shutdown): the handles and the
  // versions their flushes require.
  std::vector<std::pair<HandleState*, std::uint64_t>> close_open_runs();
  // Frees the pooled host buffers (after wait_all).
  void trim() { partials_.trim(); }
  // Bytes of partials: host buffers (in use or pooled) and partials on devices.
  std::size_t memory_bytes() const;

 private:
  // Poisons the handle of the task's access `index` with a failure of its reduction.
  void poison(Task* task, std::uint32_t index, const std::string& error);
  void drop_device_partial(int node, void* partial, std::size_t bytes);
  void give_back_flag(HandleState& handle, int worker);

  PartialPool partials_;
  FailureLog& failures_;
  Waker& waker_;
  DevicePartials* devices_ = nullptr;
};

}  // namespace versa::detail
