#pragma once

namespace versa {

// Where the tasks of a task type may run.
//   automatic   wherever the task is expected to finish first: the device's queued work, plus
//               the time to move the bytes not yet valid there, plus the execution time learned
//               online per (task type, device kind, data size). Uncalibrated types explore.
//   cpu_only    on CPU workers only.
//   gpu_only    on accelerators only (CUDA GPUs and emulated devices); refused at submit when
//               none is present or the type has no implementation for one.
//   prefer_gpu  on an accelerator when the type can run on one, else on the CPU.
enum class Placement { automatic, cpu_only, gpu_only, prefer_gpu };

// The name of a rule as written in the API ("automatic", "cpu_only", ...).
const char* to_string(Placement rule);

}  // namespace versa
