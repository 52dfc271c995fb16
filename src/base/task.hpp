// A submitted task: its accesses, its body and its place in the scheduling structures. The
// record every layer passes around; it knows handles only by pointer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include "base/wait_list.hpp"
#include "versa/detail/task_glue.hpp"

namespace versa::detail {

// The implementations a task may carry, one per kind of code: the CPU function (CPU workers),
// the CUDA function, and the emulated-device function (the CPU one unless given). Each device
// kind runs one of them (device/device_registry.hpp).
enum class ImplementationSlot : std::uint8_t { cpu, cuda, emulated };

// Whether `desc` has an implementation in `slot`.
inline bool has_implementation(const TaskDesc& desc, ImplementationSlot slot) {
  switch (slot) {
    case ImplementationSlot::cpu:
      return desc.invoke != nullptr;
    case ImplementationSlot::cuda:
      return desc.invoke_cuda != nullptr;
    case ImplementationSlot::emulated:
      return desc.invoke_emulated != nullptr;
  }
  return false;
}

// How an `add` access runs (decided when its task becomes ready): in place holding the handle's
// exclusive flag, or renamed into a partial buffer.
enum class AddRole : std::uint8_t { undecided, in_place, renamed, needs_flag };

// What scheduling decides about one access, beside the record the submit's arguments made:
// the version of the handle the task waits for and, for an add, how it runs.
struct AccessProgress {
  std::uint64_t required_version = 0;
  AddRole add_role = AddRole::undecided;
};

static_assert(sizeof(AccessRecord) % alignof(AccessProgress) == 0,
              "a task's AccessProgress array follows its records");

// Laid out so that creating and running a task with no spilled data touches two cache lines:
// the fields every task uses first, then the inline closure and the fields that need a value
// at creation, then what only parked tasks and tasks with data use.
class Task {
 public:
  // Sized for the common case (a BLAS kernel on 3 tiles; a lambda capturing a few references)
  // so that a task is one allocation from the task pool; larger ones spill to the heap.
  static constexpr std::size_t inline_accesses = 3;
  static constexpr std::size_t inline_closure_bytes = detail::inline_closure_bytes;

  // Life cycle, single-threaded at each step (the task is owned by whoever moves it):
  // submitted -> parked at handles / waiting for exclusive flags -> ready (in a deque) -> running
  // -> finished.

  // --- first cache line: read by every step ---
  InvokeFn invoke = nullptr;
  void* closure = nullptr;  // inline_closure or heap_closure
  const char* name = nullptr;
  // The records, then as many AccessProgress, in inline_records or heap_records (set_accesses).
  AccessRecord* accesses = nullptr;
  std::uint32_t access_count = 0;
  // Index of the first access whose version has not yet been seen reached; each dependency is
  // checked once however often the task is woken (SuperGlue's "first handle not available").
  std::uint32_t next_check = 0;
  // Accesses that need their handle's exclusive flag (commutes, and adds that could not be
  // renamed): the flags are held while the task is ready or running.
  std::uint16_t exclusive_count = 0;
  std::uint16_t add_count = 0;  // add accesses (their roles are decided when the task is ready)
  int priority = 0;
  DestroyFn destroy = nullptr;
  Task* parent = nullptr;  // set for spawned children

  // --- second cache line ---
  alignas(std::max_align_t) std::byte inline_closure[inline_closure_bytes];
  std::unique_ptr<std::byte[]> heap_records;
  std::unique_ptr<std::byte[]> heap_closure;  // over-allocated by the closure's alignment
  std::atomic<std::uint32_t> children{0};     // spawned children not yet finished
  bool host_access = false;                   // a Runtime::acquire ticket, not a task to run
  bool reduction_flush = false;  // applies the partials of its handle's adds; has no `invoke`
  bool runs_after_failed_copy = false;  // TaskDesc::runs_after_failed_copy (set with devices)
  std::atomic<bool> host_ready{false};  // host_access: the access may proceed
  // Holds on the task's finish taken by versa::detach(): 0 when the body never detached (the
  // common case, then the worker finishes the task after the body); else one hold for the body
  // plus one per unfulfilled Completion, and whoever releases the last one finishes the task.
  // One byte, in what was padding, so that the record keeps its two first cache lines.
  std::atomic<std::uint8_t> finish_holds{0};
  // Link in a TaskInbox, or in a queue of deferred registrations; set when pushed there.
  Task* ready_next;

  // --- used by parked tasks and tasks with data only ---
  Waiter waiter;

  // Raw storage: records are copied in at creation, so constructing a Task writes nothing here.
  static constexpr std::size_t access_bytes = sizeof(AccessRecord) + sizeof(AccessProgress);
  alignas(AccessRecord) std::byte inline_records[inline_accesses * access_bytes];

  // --- used only when the runtime has accelerators: set by the runtime then, and left
  // uninitialised otherwise, so that creating a task in a CPU-only run writes no more lines ---
  const char* type_name;  // the performance model's key (the task type's name)
  InvokeCudaFn invoke_cuda;
  InvokeFn invoke_emulated;
  Placement placement;
  int node;                   // memory node the task runs on (0: host); set when ready
  std::int64_t expected_ns;   // execution time the placement policy assumed (backlog)
  std::size_t work_size;      // the performance model's size key (work hint or data bytes)
  std::uint64_t bytes_moved;  // bytes copied to `node` for its inputs (task statistics)
  int stream;                 // device stream it runs on
  bool explored;              // placed to calibrate the performance model
  // Copies its accesses wait for before it can run on `node`, plus one while staging is in
  // progress (so that the last copy, not the stager, releases it). Atomic: use pending_fills().
  std::uint32_t pending_fills_value;
  // First failure of a copy its staging waited for; owned. Atomic: use staging_error().
  std::string* staging_error_value;

  // Whether the task has an implementation in `slot` (only with accelerators present).
  bool has_implementation(ImplementationSlot slot) const {
    switch (slot) {
      case ImplementationSlot::cpu:
        return invoke != nullptr;
      case ImplementationSlot::cuda:
        return invoke_cuda != nullptr;
      case ImplementationSlot::emulated:
        return invoke_emulated != nullptr;
    }
    return false;
  }

  // Gives the task `count` accesses, copies of `records` (handle and mode set; null: blank), each
  // with its progress reset.
  void set_accesses(const AccessRecord* records, std::size_t count) {
    std::byte* storage = inline_records;
    if (count > inline_accesses) {
      heap_records.reset(new std::byte[count * access_bytes]);
      storage = heap_records.get();
    }
    accesses = reinterpret_cast<AccessRecord*>(storage);
    access_count = static_cast<std::uint32_t>(count);
    for (std::size_t i = 0; i < count; ++i) {
      new (accesses + i) AccessRecord(records ? records[i] : AccessRecord{});
      new (&progress(static_cast<std::uint32_t>(i))) AccessProgress{};
    }
  }
  AccessProgress& progress(std::uint32_t i) {
    return reinterpret_cast<AccessProgress*>(accesses + access_count)[i];
  }
  const AccessProgress& progress(std::uint32_t i) const {
    return reinterpret_cast<const AccessProgress*>(accesses + access_count)[i];
  }

  std::atomic_ref<std::uint32_t> pending_fills() {
    return std::atomic_ref<std::uint32_t>(pending_fills_value);
  }
  std::atomic_ref<std::string*> staging_error() {
    return std::atomic_ref<std::string*>(staging_error_value);
  }
};

}  // namespace versa::detail
