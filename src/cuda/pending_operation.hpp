// An operation queued on a CUDA stream whose completion has not been reported yet: the events
// that bracket it, any failure already seen while queueing it, and whom to tell.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "cuda/check_slots.hpp"
#include "cuda/event_pool.hpp"
#include "device/device.hpp"

namespace versa::detail {

// What an operation is, for messages. Built from literals and the task's interned name so that
// queueing costs no string formatting; the text is made only when something fails.
struct OperationLabel {
  const char* operation = "";       // "cudaMemcpy2DAsync host->device", "task"
  const char* task_name = nullptr;  // tasks: the type's interned name
  std::size_t bytes = 0;            // copies: the bytes copied
};

// "task 'potrf'", "cudaMemcpy2DAsync host->device of 8 MiB".
std::string describe(const OperationLabel& label);

// "cudaMemcpy2DAsync host->device of 8 MiB on cuda:0 failed: out of memory"; `call`, when not
// null, names the call that failed if it is not the operation itself ("... failed:
// cudaEventRecord: ...").
std::string describe_failure(const OperationLabel& label, const std::string& device,
                             cudaError_t status, const char* call = nullptr);

// A device word a task's implementation asked to check once its work is done
// (CudaContext::check_after): its copy into `slot`, taken from `slots`, was queued on the stream
// before the operation's end event.
struct DeviceWordCheck {
  int* slot = nullptr;
  CheckSlots* slots = nullptr;
  std::function<std::string(int)> check;
};

struct PendingOperation {
  OperationLabel label;
  // Recorded on the stream just before and after the operation. `end` is empty when queueing
  // failed and nothing is left to wait for: the operation completes as soon as it is polled.
  PooledEvent start;
  PooledEvent end;
  // A failure seen while queueing (a launch error, an exception from the implementation); it
  // takes precedence over what the end event later reports.
  std::string error;
  std::exception_ptr exception;
  // Checked in order once the end event has completed without error; the first message fails
  // the operation.
  std::vector<DeviceWordCheck> checks;
  Completion done;
};

}  // namespace versa::detail
