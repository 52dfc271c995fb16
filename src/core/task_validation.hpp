// The checks of a submitted task, at the call that submits it: something can run it, its
// accesses are to distinct registered handles, its adds have a fitting operator, and a spawned
// child does not access what an ancestor holds (it would wait for it forever).
#pragma once

#include "base/task.hpp"

namespace versa::detail {

class DeviceDispatch;

// Throws std::invalid_argument naming the task and what is wrong. `parent` is the task a
// spawned child belongs to (null for submit), `root` the main program's; `devices` null when
// the runtime has none.
void check_task(const TaskDesc& desc, const Task* parent, const Task* root,
                const DeviceDispatch* devices);

// Whether a runtime without devices can run the task: it has a CPU body that may run there.
inline bool runnable_on_cpu(const TaskDesc& desc) {
  return desc.invoke && desc.placement != Placement::gpu_only;
}

// check_task, with the common fine-grained case decided in line: a CPU body without accesses,
// in a runtime without devices, is always valid (a call would cost a tenth of such a task).
inline void validate_task(const TaskDesc& desc, const Task* parent, const Task* root,
                          const DeviceDispatch* devices) {
  if (desc.access_count == 0 && !devices && runnable_on_cpu(desc)) return;
  check_task(desc, parent, root, devices);
}

}  // namespace versa::detail
