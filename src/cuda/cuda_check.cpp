#include "cuda/cuda_check.hpp"

#include <cstdio>

namespace versa::detail {

CudaError::CudaError(const std::string& call, const char* reason)
    : std::runtime_error(call + " failed: " + reason) {}

const char* status_message(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_SUCCESS:
      return "success";
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      return "cuSOLVER not initialized";
    case CUSOLVER_STATUS_ALLOC_FAILED:
      return "cuSOLVER resource allocation failed";
    case CUSOLVER_STATUS_INVALID_VALUE:
      return "invalid value passed to cuSOLVER";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      return "the device does not support this cuSOLVER feature";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      return "cuSOLVER kernel failed to launch";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      return "cuSOLVER internal error";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
      return "matrix type not supported by cuSOLVER";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      return "operation not supported by cuSOLVER";
    case CUSOLVER_STATUS_INVALID_WORKSPACE:
      return "invalid cuSOLVER workspace";
    default:
      return "cuSOLVER error";
  }
}

void throw_if_failed(cudaError_t status, const char* call) {
  if (status != cudaSuccess) throw CudaError(call, cudaGetErrorString(status));
}

void throw_if_failed(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) throw CudaError(call, cublasGetStatusString(status));
}

void throw_if_failed(cusolverStatus_t status, const char* call) {
  if (status != CUSOLVER_STATUS_SUCCESS) throw CudaError(call, status_message(status));
}

}  // namespace versa::detail
