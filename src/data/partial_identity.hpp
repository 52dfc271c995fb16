// Writing the identity into the partial buffers of a task's renamed add accesses, where the task
// runs: on the host or emulated device with the operator's CPU function, on a GPU with its
// CUDA function on the task's stream.
#pragma once

#include "base/task.hpp"
#include "data/handle_state.hpp"

namespace versa::detail {

// Fills the partial buffers of `task`'s renamed add accesses with their identity: with the CPU
// functions (host, emulated device), or with the CUDA ones on `context`'s stream when given.
inline void fill_partials_with_identity(Task& task, CudaContext* context) {
  if (task.add_count == 0) return;
  for (std::uint32_t i = 0; i < task.access_count; ++i) {
    if (task.progress(i).add_role != AddRole::renamed) continue;
    const AccessRecord& access = task.accesses[i];
    const ReductionOps& ops = *access.handle->reduction();
    const std::size_t count = access.layout->rows * access.layout->cols;
    if (context) {
      ops.cuda_identity(*context, access.data, count);
    } else {
      ops.identity(access.data, count);
    }
  }
}

}  // namespace versa::detail
