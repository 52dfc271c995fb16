// The GPU reference: cuSOLVER's dense Cholesky (cusolverDnDpotrf) on the whole matrix, as a user
// with one GPU and no runtime would call it. The time includes copying the matrix to the GPU
// and the factor back, as Versa's does.
#include <stdexcept>
#include <string>

#include "cholesky/peers.hpp"
#include "common/harness.hpp"

#if VERSA_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

namespace bench {

namespace {
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
void check(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed with status " +
                             std::to_string(static_cast<int>(status)));
}
}  // namespace

bool cusolver_available() {
  int count = 0;
  const bool present = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();
  return present;
}

double cholesky_cusolver(double* a, int n) {
  const std::size_t bytes = static_cast<std::size_t>(n) * n * sizeof(double);
  cusolverDnHandle_t handle = nullptr;
  check(cusolverDnCreate(&handle), "cusolverDnCreate");
  check(cudaHostRegister(a, bytes, cudaHostRegisterDefault), "cudaHostRegister");
  double* matrix = nullptr;
  int* info = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&matrix), bytes), "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void**>(&info), sizeof(int)), "cudaMalloc");
  int lwork = 0;
  check(cusolverDnDpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, matrix, n, &lwork),
        "cusolverDnDpotrf_bufferSize");
  double* work = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&work), sizeof(double) * lwork), "cudaMalloc");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const auto start = Clock::now();
  check(cudaMemcpy(matrix, a, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, matrix, n, work, lwork, info),
        "cusolverDnDpotrf");
  check(cudaMemcpy(a, matrix, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  const double seconds = seconds_since(start);
  int result = 0;
  check(cudaMemcpy(&result, info, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(work);
  cudaFree(info);
  cudaFree(matrix);
  cudaHostUnregister(a);
  cusolverDnDestroy(handle);
  if (result != 0) throw std::runtime_error("cusolverDnDpotrf: info " + std::to_string(result));
  return seconds;
}

}  // namespace bench
#else
namespace bench {
bool cusolver_available() { return false; }
double cholesky_cusolver(double*, int) {
  throw std::runtime_error("this build has no CUDA backend");
}
}  // namespace bench
#endif
