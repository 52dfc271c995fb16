#include "core/task_validation.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/names.hpp"
#include "core/device_dispatch.hpp"
#include "data/handle_state.hpp"

namespace versa::detail {

namespace {

// Whether operator `ops` fits the elements of `handle`: by type when both are known (an int64_t
// summed as double has the right size), else by size. Throws std::invalid_argument if not.
void check_elements(const std::string& task, const HandleState& handle, const ReductionOps& ops) {
  const Layout& layout = *handle.layout();
  if (layout.element_type && ops.element_type && *layout.element_type != *ops.element_type)
    throw std::invalid_argument(task + " adds into " + quoted_handle(handle.name()) +
                                ", whose elements are " + type_name(*layout.element_type) +
                                ", with operator '" + ops.name + "' for elements of " +
                                type_name(*ops.element_type));
  if (ops.element_size != layout.element_size)
    throw std::invalid_argument(task + " adds into " + quoted_handle(handle.name()) +
                                ", whose elements have " + std::to_string(layout.element_size) +
                                " bytes, with operator '" + ops.name + "' for elements of " +
                                std::to_string(ops.element_size) + " bytes");
}

// An add access: the handle's operator, bound now from the task type's if the handle has
// none, must fit the elements and every device the task may run on. Checked before binding, so
// that a refused task leaves the handle as it was.
void check_reduction(const TaskDesc& desc, const AccessRecord& access,
                     const DeviceDispatch* devices) {
  HandleState* handle = access.handle;
  if (handle->layout()->bytes() == 0) return;  // a token: adds to it just exclude each other
  const std::string task = "task '" + std::string(desc.name) + "'";
  const ReductionOps* ops = handle->reduction();
  if (!ops && !desc.reduction)
    throw std::invalid_argument(
        task + " adds into " + quoted_handle(handle->name()) +
        ", which has no reduction operator: bind one with set_reduction() on the handle or "
        "reduction() on the task type (versa::sum<T>() for sums)");
  if (ops && desc.reduction && desc.reduction != ops)
    throw std::invalid_argument(task + " adds into " + quoted_handle(handle->name()) +
                                " with operator '" + desc.reduction->name +
                                "', but the handle is reduced with '" + ops->name + "'");
  const ReductionOps& chosen = ops ? *ops : *desc.reduction;
  check_elements(task, *handle, chosen);
  if (const Device* device = devices ? devices->device_refusing(desc, chosen) : nullptr)
    throw std::invalid_argument(task + " may run on " + device->name() + " but the operator '" +
                                chosen.name + "' of " + quoted_handle(handle->name()) +
                                " has no functions for it (cuda_identity and cuda_merge)");
  if (ops) return;
  const std::string refused = handle->bind_reduction(desc.reduction, nullptr, false);
  if (!refused.empty() && handle->reduction() != desc.reduction)
    throw std::invalid_argument(task + " adds into " + quoted_handle(handle->name()) +
                                " with operator '" + desc.reduction->name + "', but " + refused);
}

}  // namespace

void check_task(const TaskDesc& desc, const Task* parent, const Task* root,
                const DeviceDispatch* devices) {
  const bool runnable = devices ? devices->runnable(desc) : runnable_on_cpu(desc);
  if (!runnable) {
    std::string has;
    if (desc.invoke) has += "cpu";
    if (desc.invoke_cuda) has += has.empty() ? "cuda" : ", cuda";
    if (desc.cuda_left_out)
      has += has.empty() ? "cuda (left out: Versa is built without CUDA)"
                         : ", cuda (left out: Versa is built without CUDA)";
    throw std::invalid_argument(
        "task '" + std::string(desc.name) + "' has no implementation for any present device " +
        "(present: " + (devices ? devices->present_kinds() : std::string("cpu")) + "; it has: " +
        (has.empty() ? "none" : has) + "; placement " + to_string(desc.placement) + ")");
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
    if (accesses[i].mode == AccessMode::add) check_reduction(desc, accesses[i], devices);
    if (devices && writes_at_once(accesses[i].mode) &&
        (!desc.invoke || desc.placement == Placement::gpu_only))
      throw std::invalid_argument(
          "task '" + std::string(desc.name) + "' accesses " +
          quoted_handle(accesses[i].handle->name()) +
          " in a mode whose tasks write it at once (reorderable, not exclusive); they must all "
          "write one copy, so with accelerators they run on the CPU, which this task cannot (" +
          (desc.invoke ? "placement gpu_only" : "no CPU implementation") + ")");
  }
  // A handle given twice would make the task wait for itself. Small tasks compare pairwise;
  // larger ones sort a copy.
  auto duplicate = [&](const HandleState* h) {
    throw std::invalid_argument(
        "task '" + std::string(desc.name) + "' accesses " + quoted_handle(h->name()) +
        " twice; give each handle once, with the " + "strongest mode needed");
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
  // for its descendants. A task without accesses skips the walk, which costs the nesting depth
  // per spawn (1572 levels in a UTS binomial tree).
  if (n == 0) return;
  for (const Task* ancestor = parent; ancestor && ancestor != root; ancestor = ancestor->parent) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::uint32_t j = 0; j < ancestor->access_count; ++j)
        if (accesses[i].handle == ancestor->accesses[j].handle->root())
          throw std::invalid_argument(
              "task '" + std::string(desc.name) + "' is spawned inside task '" + ancestor->name +
              "', which holds " + quoted_handle(accesses[i].handle->name()) +
              ": the child would wait for that task and that task for the child. Pass the data "
              "through the enclosing task's view, or submit() the task instead of spawn()");
  }
}

}  // namespace versa::detail
