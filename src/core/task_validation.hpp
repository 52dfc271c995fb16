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
void validate_task(const TaskDesc& desc, const Task* parent, const Task* root,
                   const DeviceDispatch* devices);

}  // namespace versa::detail
