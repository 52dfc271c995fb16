// Names versa::CudaContext without the CUDA headers, for code that must also build where there is
// no CUDA: the headers that declare the kernel wrappers a .cuda(f) body calls with its context,
// and (through versa/task_type.hpp) every .cuda(f) body. versa/cuda.hpp defines the class, with
// its CUDA-typed accessors; include it only in the files that CUDA builds alone compile (.cu).
#pragma once

namespace versa {

// The GPU worker context a CUDA implementation runs in (versa/cuda.hpp).
class CudaContext;

}  // namespace versa
