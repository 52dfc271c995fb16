// One stream of a CUDA device with what task implementations launched on it need: the stream,
// a cuBLAS and a cuSOLVER handle bound to it, and a scratch buffer. This is the CudaContext an
// implementation receives.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda/check_slots.hpp"
#include "cuda/current_device.hpp"
#include "cuda/pending_operation.hpp"
#include "cuda/sm_partition.hpp"
#include "versa/cuda.hpp"

namespace versa::detail {

class StreamContext final : public versa::CudaContext {
 public:
  // Creates a non-blocking stream on device `ordinal`, of the device's highest priority when
  // `high_priority` (else of the default, its lowest), and the library handles for it. With a
  // `partition`, the stream runs on its panel's SMs when `high_priority`, else on its other SMs;
  // the partition must outlive the context. Throws CudaError when any of them cannot be created.
  explicit StreamContext(int ordinal, bool high_priority = false,
                         const SmPartition* partition = nullptr);
  // Waits for the work queued on the stream, then releases the workspace, the handles and the
  // stream.
  ~StreamContext();
  StreamContext(const StreamContext&) = delete;
  StreamContext& operator=(const StreamContext&) = delete;

  cudaStream_t stream() override { return stream_.get(); }
  cublasHandle_t cublas() override { return cublas_.get(); }
  cusolverDnHandle_t cusolver() override { return cusolver_.get(); }
  // Grows the buffer in stream order when `bytes` exceeds it: the old buffer is freed, and the
  // new one allocated, as operations queued on the stream, so work already queued keeps using
  // the old buffer safely and nothing waits. Throws CudaError when the allocation fails.
  // Not thread-safe: called only by the implementation running on this stream, which the
  // device serialises (CudaDevice holds the stream's queue lock around it).
  void* workspace(std::size_t bytes) override;
  int device() const override { return ordinal_; }
  // Queues the word's copy into a pinned slot and keeps the check for take_checks. When every
  // slot waits to be read (more checks in flight than there are slots), it waits for the stream
  // and checks at once, throwing the message. Not thread-safe, as workspace().
  void check_after(const int* device_word, std::function<std::string(int)> check) override;
  // The checks queued since the last call (CudaDevice::execute takes them for the operation of
  // the implementation that queued them, and sets those of an enclosing implementation aside
  // while it runs a nested one with restore_checks).
  std::vector<DeviceWordCheck> take_checks() { return std::exchange(checks_, {}); }
  void restore_checks(std::vector<DeviceWordCheck> checks) { checks_ = std::move(checks); }

 private:
  // Frees the workspace in stream order (or, on devices without stream-ordered allocation,
  // after waiting for the stream).
  struct WorkspaceRelease {
    int ordinal = 0;
    cudaStream_t stream = nullptr;
    bool stream_ordered = true;
    void operator()(void* buffer) const;
  };

  const int ordinal_;
  // cudaMallocAsync needs memory-pool support, which every GPU of the last years has.
  bool stream_ordered_allocation_ = false;
  // Declared before the handles and the workspace so that it is destroyed after them.
  std::unique_ptr<CUstream_st, ReleaseOnDevice<cudaStream_t, cudaStreamDestroy>> stream_;
  std::unique_ptr<cublasContext, ReleaseOnDevice<cublasHandle_t, cublasDestroy>> cublas_;
  std::unique_ptr<cusolverDnContext, ReleaseOnDevice<cusolverDnHandle_t, cusolverDnDestroy>>
      cusolver_;
  std::unique_ptr<void, WorkspaceRelease> workspace_;
  std::size_t workspace_bytes_ = 0;
  CheckSlots slots_;
  std::vector<DeviceWordCheck> checks_;
};

}  // namespace versa::detail
