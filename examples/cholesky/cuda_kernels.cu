// The GPU tile kernels declared in cuda_kernels.hpp. Compiled only with the CUDA backend.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_kernels.hpp"
#include "versa/cuda.hpp"

namespace cholesky::cuda {

namespace {

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed (cuBLAS status " +
                             std::to_string(static_cast<int>(status)) + ")");
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed (" + cudaGetErrorString(status) + ")");
}

void check(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed (cuSOLVER status " +
                             std::to_string(static_cast<int>(status)) + ")");
}

// potrf reports a non-positive-definite tile in a device word: checked once the stream has
// run it (CudaContext::check_after), so that the failure is the task's, as on the CPU, and the
// GPU worker goes on launching the other tasks meanwhile.
void check_info(versa::CudaContext& gpu, const int* info_on_device) {
  gpu.check_after(info_on_device, [](int info) -> std::string {
    if (info > 0)
      return "the tile is not positive definite (leading minor " + std::to_string(info) +
             " of the tile)";
    if (info < 0) return "potrf: invalid argument " + std::to_string(-info);
    return {};
  });
}

template <class T>
constexpr cudaDataType data_type = std::is_same_v<T, double> ? CUDA_R_64F : CUDA_R_32F;

// cuSOLVER's trtri works in place: L is copied into `inverse` first, on the stream.
template <class T>
void invert_lower_of(versa::CudaContext& gpu, int n, const T* l, int ldl, T* inverse, int ldi) {
  check(cudaMemcpy2DAsync(inverse, sizeof(T) * ldi, l, sizeof(T) * ldl, sizeof(T) * n, n,
                          cudaMemcpyDeviceToDevice, gpu.stream()),
        "copying the diagonal tile");
  std::size_t device_bytes = 0, host_bytes = 0;
  check(cusolverDnXtrtri_bufferSize(gpu.cusolver(), CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, n,
                                    data_type<T>, inverse, ldi, &device_bytes, &host_bytes),
        "cusolverDnXtrtri_bufferSize");
  // The info word after the workspace, aligned as cuSOLVER aligns its workspaces.
  const std::size_t info_offset = (device_bytes + 255) / 256 * 256;
  auto* work = static_cast<char*>(gpu.workspace(info_offset + sizeof(int)));
  int* info = reinterpret_cast<int*>(work + info_offset);
  // Host workspace, if cuSOLVER asks for any, lives until the stream has run the call: freed by
  // a host function queued after it.
  auto* host = host_bytes > 0 ? new std::vector<char>(host_bytes) : nullptr;
  const cusolverStatus_t status = cusolverDnXtrtri(
      gpu.cusolver(), CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, n, data_type<T>, inverse, ldi,
      work, device_bytes, host ? host->data() : nullptr, host_bytes, info);
  if (host != nullptr &&
      (status != CUSOLVER_STATUS_SUCCESS ||
       cudaLaunchHostFunc(
           gpu.stream(), [](void* p) { delete static_cast<std::vector<char>*>(p); }, host) !=
           cudaSuccess))
    delete host;  // nothing queued uses it, or the stream is broken and the task fails anyway
  check(status, "cusolverDnXtrtri");
  gpu.check_after(info, [](int i) -> std::string {
    if (i > 0)
      return "trtri: the diagonal tile is singular (diagonal entry " + std::to_string(i) + ")";
    if (i < 0) return "trtri: invalid argument " + std::to_string(-i);
    return {};
  });
}

}  // namespace

void potrf(versa::CudaContext& gpu, int n, double* a, int lda) {
  int lwork = 0;
  check(cusolverDnDpotrf_bufferSize(gpu.cusolver(), CUBLAS_FILL_MODE_LOWER, n, a, lda, &lwork),
        "cusolverDnDpotrf_bufferSize");
  auto* work = static_cast<double*>(gpu.workspace(sizeof(double) * lwork + sizeof(int)));
  int* info = reinterpret_cast<int*>(work + lwork);
  check(cusolverDnDpotrf(gpu.cusolver(), CUBLAS_FILL_MODE_LOWER, n, a, lda, work, lwork, info),
        "cusolverDnDpotrf");
  check_info(gpu, info);
}

void potrf(versa::CudaContext& gpu, int n, float* a, int lda) {
  int lwork = 0;
  check(cusolverDnSpotrf_bufferSize(gpu.cusolver(), CUBLAS_FILL_MODE_LOWER, n, a, lda, &lwork),
        "cusolverDnSpotrf_bufferSize");
  auto* work = static_cast<float*>(gpu.workspace(sizeof(float) * lwork + sizeof(int)));
  int* info = reinterpret_cast<int*>(work + lwork);
  check(cusolverDnSpotrf(gpu.cusolver(), CUBLAS_FILL_MODE_LOWER, n, a, lda, work, lwork, info),
        "cusolverDnSpotrf");
  check_info(gpu, info);
}

void trsm(versa::CudaContext& gpu, int m, int n, const double* l, int ldl, double* b, int ldb) {
  const double one = 1.0;
  check(cublasDtrsm(gpu.cublas(), CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                    CUBLAS_DIAG_NON_UNIT, m, n, &one, l, ldl, b, ldb),
        "cublasDtrsm");
}

void trsm(versa::CudaContext& gpu, int m, int n, const float* l, int ldl, float* b, int ldb) {
  const float one = 1.0f;
  check(cublasStrsm(gpu.cublas(), CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                    CUBLAS_DIAG_NON_UNIT, m, n, &one, l, ldl, b, ldb),
        "cublasStrsm");
}

void invert_lower(versa::CudaContext& gpu, int n, const double* l, int ldl, double* inverse,
                  int ldi) {
  invert_lower_of(gpu, n, l, ldl, inverse, ldi);
}

void invert_lower(versa::CudaContext& gpu, int n, const float* l, int ldl, float* inverse,
                  int ldi) {
  invert_lower_of(gpu, n, l, ldl, inverse, ldi);
}

// In place: cuBLAS's trmm writes C, and allows C to be B.
void trmm(versa::CudaContext& gpu, int m, int n, const double* inverse, int ldi, double* b,
          int ldb) {
  const double one = 1.0;
  check(cublasDtrmm(gpu.cublas(), CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                    CUBLAS_DIAG_NON_UNIT, m, n, &one, inverse, ldi, b, ldb, b, ldb),
        "cublasDtrmm");
}

void trmm(versa::CudaContext& gpu, int m, int n, const float* inverse, int ldi, float* b, int ldb) {
  const float one = 1.0f;
  check(cublasStrmm(gpu.cublas(), CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                    CUBLAS_DIAG_NON_UNIT, m, n, &one, inverse, ldi, b, ldb, b, ldb),
        "cublasStrmm");
}

void syrk(versa::CudaContext& gpu, int n, int k, const double* a, int lda, double* c, int ldc) {
  const double minus_one = -1.0, one = 1.0;
  check(cublasDsyrk(gpu.cublas(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &minus_one, a, lda,
                    &one, c, ldc),
        "cublasDsyrk");
}

void syrk(versa::CudaContext& gpu, int n, int k, const float* a, int lda, float* c, int ldc) {
  const float minus_one = -1.0f, one = 1.0f;
  check(cublasSsyrk(gpu.cublas(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &minus_one, a, lda,
                    &one, c, ldc),
        "cublasSsyrk");
}

void gemm(versa::CudaContext& gpu, int m, int n, int k, const double* a, int lda, const double* b,
          int ldb, double* c, int ldc) {
  const double minus_one = -1.0, one = 1.0;
  check(cublasDgemm(gpu.cublas(), CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &minus_one, a, lda, b, ldb,
                    &one, c, ldc),
        "cublasDgemm");
}

void gemm(versa::CudaContext& gpu, int m, int n, int k, const float* a, int lda, const float* b,
          int ldb, float* c, int ldc) {
  const float minus_one = -1.0f, one = 1.0f;
  check(cublasSgemm(gpu.cublas(), CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &minus_one, a, lda, b, ldb,
                    &one, c, ldc),
        "cublasSgemm");
}

}  // namespace cholesky::cuda
