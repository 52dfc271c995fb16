#include "cuda/stream_context.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "base/names.hpp"
#include "cuda/cuda_check.hpp"

namespace versa::detail {

namespace {

// Workspaces grow in whole MiB so that a run of slightly larger requests reallocates once.
constexpr std::size_t workspace_granularity = std::size_t{1} << 20;

}  // namespace

void StreamContext::WorkspaceRelease::operator()(void* buffer) const {
  CurrentDeviceGuard guard(ordinal);
  if (stream_ordered) {
    (void)cudaFreeAsync(buffer, stream);
  } else {
    (void)cudaStreamSynchronize(stream);
    (void)cudaFree(buffer);
  }
}

StreamContext::StreamContext(int ordinal, bool high_priority, const SmPartition* partition)
    : ordinal_(ordinal),
      stream_(nullptr, {ordinal}),
      cublas_(nullptr, {ordinal}),
      cusolver_(nullptr, {ordinal}),
      workspace_(nullptr, {}),
      slots_(ordinal, 256) {
  CurrentDeviceGuard guard(ordinal);
  throw_if_failed(guard.status(), "cudaSetDevice");

  int pools = 0;
  throw_if_failed(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, ordinal),
                  "cudaDeviceGetAttribute");
  stream_ordered_allocation_ = pools != 0;

  // The GPU's highest priority, or the default (0, its lowest).
  int priority = 0;
  if (high_priority) {
    int least = 0;
    throw_if_failed(cudaDeviceGetStreamPriorityRange(&least, &priority),
                    "cudaDeviceGetStreamPriorityRange");
  }
  // Non-blocking: the stream must not synchronise with the legacy default stream, which
  // libraries and user code may use behind our back.
  cudaStream_t stream = nullptr;
  if (partition != nullptr)
    stream = partition->create_stream(high_priority, priority);
  else
    throw_if_failed(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, priority),
                    "cudaStreamCreateWithPriority");
  stream_.reset(stream);

  cublasHandle_t cublas = nullptr;
  throw_if_failed(cublasCreate(&cublas), "cublasCreate");
  cublas_.reset(cublas);
  throw_if_failed(cublasSetStream(cublas, stream), "cublasSetStream");
  // cuBLAS sizes its kernels' grids to the GPU's SMs unless told how many the stream has.
  if (partition != nullptr)
    throw_if_failed(cublasSetSmCountTarget(
                        cublas, high_priority ? partition->panel_sms() : partition->other_sms()),
                    "cublasSetSmCountTarget");

  cusolverDnHandle_t cusolver = nullptr;
  throw_if_failed(cusolverDnCreate(&cusolver), "cusolverDnCreate");
  cusolver_.reset(cusolver);
  throw_if_failed(cusolverDnSetStream(cusolver, stream), "cusolverDnSetStream");

  workspace_ = std::unique_ptr<void, WorkspaceRelease>(
      nullptr, WorkspaceRelease{ordinal, stream, stream_ordered_allocation_});
}

StreamContext::~StreamContext() {
  {
    CurrentDeviceGuard guard(ordinal_);
    (void)cudaStreamSynchronize(stream_.get());
  }
  // The members' deleters release the rest, each on this device, in reverse order of
  // declaration: workspace, cuSOLVER, cuBLAS, stream.
}

void* StreamContext::workspace(std::size_t bytes) {
  if (bytes <= workspace_bytes_) return workspace_.get();
  const std::size_t rounded =
      (bytes + workspace_granularity - 1) / workspace_granularity * workspace_granularity;

  CurrentDeviceGuard guard(ordinal_);
  workspace_.reset();
  workspace_bytes_ = 0;
  void* buffer = nullptr;
  cudaError_t status;
  if (stream_ordered_allocation_) {
    status = cudaMallocAsync(&buffer, rounded, stream_.get());
  } else {
    status = cudaMalloc(&buffer, rounded);
  }
  if (status != cudaSuccess) {
    // Cleared so that the device does not report it a second time as a launch failure.
    (void)cudaGetLastError();
    throw CudaError(std::string(stream_ordered_allocation_ ? "cudaMallocAsync" : "cudaMalloc") +
                        " of a " + format_bytes(rounded) +
                        " workspace on cuda:" + std::to_string(ordinal_),
                    cudaGetErrorString(status));
  }
  workspace_.reset(buffer);
  workspace_bytes_ = rounded;
  return buffer;
}

void StreamContext::check_after(const int* device_word, std::function<std::string(int)> check) {
  CurrentDeviceGuard guard(ordinal_);
  int* slot = slots_.take();
  if (slot == nullptr) {
    int value = 0;
    cudaError_t status =
        cudaMemcpyAsync(&value, device_word, sizeof(int), cudaMemcpyDeviceToHost, stream_.get());
    if (status == cudaSuccess) status = cudaStreamSynchronize(stream_.get());
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      throw CudaError("reading a checked word on cuda:" + std::to_string(ordinal_),
                      cudaGetErrorString(status));
    }
    if (std::string message = check(value); !message.empty()) throw std::runtime_error(message);
    return;
  }
  const cudaError_t status =
      cudaMemcpyAsync(slot, device_word, sizeof(int), cudaMemcpyDeviceToHost, stream_.get());
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    slots_.give_back(slot);
    throw CudaError("queueing the read of a checked word on cuda:" + std::to_string(ordinal_),
                    cudaGetErrorString(status));
  }
  checks_.push_back({slot, &slots_, std::move(check)});
}

}  // namespace versa::detail
