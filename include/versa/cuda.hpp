// What a CUDA implementation of a task type receives: the GPU worker's stream and library
// handles. This header includes the CUDA headers: include it where only CUDA builds compile (the
// .cu files that define the kernel wrappers a .cuda(f) body calls). Code that must also build
// without CUDA names the class through versa/cuda_fwd.hpp and passes the context on (see
// TaskType::cuda).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <cstddef>
#include <functional>
#include <string>

namespace versa {

// The GPU worker context a CUDA implementation runs in. Launch all work on stream(): the task
// is finished when the work queued there up to the implementation's return has completed (the
// runtime records an event; it never synchronises the device). The cuBLAS and cuSOLVER handles
// are bound to stream() already.
//
//   .cuda([](versa::CudaContext& gpu, versa::Tile<const double> a, versa::Tile<double> c) {
//     const double alpha = -1.0, beta = 1.0;
//     cublasDsyrk(gpu.cublas(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, c.rows(), a.cols(), &alpha,
//                 a.data(), a.ld(), &beta, c.data(), c.ld()); })
class CudaContext {
 public:
  virtual cudaStream_t stream() = 0;
  virtual cublasHandle_t cublas() = 0;
  virtual cusolverDnHandle_t cusolver() = 0;
  // Device scratch memory of at least `bytes`, valid until the implementation returns and the
  // work it queued on stream() has completed (e.g. cuSOLVER's workspace and info word).
  virtual void* workspace(std::size_t bytes) = 0;
  // The CUDA device ordinal.
  virtual int device() const = 0;
  // Has the int at `device_word` (device memory) read once the work queued on stream() so far
  // has completed, without waiting for it here, and then calls `check` with its value on a
  // runtime thread: a message it returns fails the task as a throw from the implementation
  // would (std::runtime_error with the message; the task's dependents are cancelled), an empty
  // one lets the task end. For a status that a library leaves in device memory (cuSOLVER's
  // devInfo): reading it in the implementation would hold the GPU worker, which launches the
  // other tasks, until the stream drains. `check` must not call into the runtime. Throws
  // std::runtime_error when the read cannot be queued.
  //
  //   cusolverDnDpotrf(gpu.cusolver(), CUBLAS_FILL_MODE_LOWER, n, a, lda, work, lwork, info);
  //   gpu.check_after(info, [](int i) { return i > 0 ? "not positive definite" : ""; });
  virtual void check_after(const int* device_word, std::function<std::string(int)> check) = 0;

 protected:
  ~CudaContext() = default;
};

}  // namespace versa
