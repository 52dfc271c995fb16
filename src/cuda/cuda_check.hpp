// CUDA runtime, cuBLAS and cuSOLVER statuses as message text, and the exception the CUDA
// backend throws where a failure cannot be reported through an OperationResult (opening a
// device, growing a workspace).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace versa::detail {

// A CUDA, cuBLAS or cuSOLVER call that failed; what() is "<call> failed: <reason>".
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& call, const char* reason);
};

// cuSOLVER has no status-to-string function of its own; cuBLAS (cublasGetStatusString) and the
// runtime (cudaGetErrorString) have.
const char* status_message(cusolverStatus_t status);

// Throw CudaError naming `call` unless `status` is success. `call` is a literal: building the
// message costs nothing on the success path.
void throw_if_failed(cudaError_t status, const char* call);
void throw_if_failed(cublasStatus_t status, const char* call);
void throw_if_failed(cusolverStatus_t status, const char* call);

}  // namespace versa::detail
