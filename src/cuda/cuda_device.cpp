#include "cuda/cuda_device.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

#include "base/failure.hpp"
#include "base/names.hpp"
#include "base/task.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/current_device.hpp"
#include "data/partial_identity.hpp"
#include "device/device_registry.hpp"

namespace versa::detail {

namespace {

constexpr std::size_t mebibyte = std::size_t{1} << 20;
// Large enough that the fixed cost of a copy is negligible, small enough to take a few
// milliseconds at start-up.
constexpr std::size_t bandwidth_probe_bytes = 64 * mebibyte;
// What a PCIe 4.0 x16 link delivers in practice; assumed when the measurement fails.
constexpr double fallback_bandwidth = 16e9;
constexpr int default_streams = 4;

std::string device_label(int ordinal) { return "cuda:" + std::to_string(ordinal); }

std::string device_name(int ordinal) {
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return device_label(ordinal) + " (unknown GPU)";
  }
  return device_label(ordinal) + " (" + properties.name + ")";
}

int checked_stream_count(int streams) {
  if (streams < 1) throw std::invalid_argument("a CUDA device needs at least one stream");
  return streams;
}

struct PinnedRelease {
  void operator()(void* buffer) const { (void)cudaFreeHost(buffer); }
};
struct DeviceRelease {
  void operator()(void* buffer) const { (void)cudaFree(buffer); }
};

}  // namespace

CudaDevice::CudaDevice(int ordinal, int streams, std::size_t memory_limit)
    : ordinal_(ordinal),
      label_(device_label(ordinal)),
      name_(device_name(ordinal)),
      events_(ordinal),
      poller_(ordinal, label_, checked_stream_count(streams) + 2) {
  streams_.reserve(static_cast<std::size_t>(streams) + 2);
  for (int index = 0; index < streams + 2; ++index) {
    streams_.push_back(std::make_unique<Stream>(ordinal));
  }

  CurrentDeviceGuard guard(ordinal_);
  bandwidth_ = measure_bandwidth();

  // Measured last, once the streams' library handles and the probe's buffers have taken and
  // returned their memory. The 10% left over is for what is allocated outside the runtime's
  // accounting: workspaces, cuBLAS and cuSOLVER internals, the user's own allocations.
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  throw_if_failed(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  memory_capacity_ = free_bytes / 10 * 9;
  if (memory_limit != 0) memory_capacity_ = std::min(memory_capacity_, memory_limit);
}

CudaDevice::~CudaDevice() = default;

double CudaDevice::measure_bandwidth() {
  void* host = nullptr;
  void* device = nullptr;
  if (cudaMallocHost(&host, bandwidth_probe_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return fallback_bandwidth;
  }
  std::unique_ptr<void, PinnedRelease> host_buffer(host);
  if (cudaMalloc(&device, bandwidth_probe_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return fallback_bandwidth;
  }
  std::unique_ptr<void, DeviceRelease> device_buffer(device);

  PooledEvent start;
  PooledEvent end;
  cudaStream_t stream = streams_.front()->context.stream();
  float milliseconds = 0;
  // The first copy pays for lazy initialisation (DMA mappings, the copy engines' first use);
  // the second one is timed.
  const bool measured =
      events_.acquire(start) == cudaSuccess && events_.acquire(end) == cudaSuccess &&
      cudaMemcpyAsync(device, host, 4 * mebibyte, cudaMemcpyHostToDevice, stream) == cudaSuccess &&
      cudaEventRecord(start.get(), stream) == cudaSuccess &&
      cudaMemcpyAsync(device, host, bandwidth_probe_bytes, cudaMemcpyHostToDevice, stream) ==
          cudaSuccess &&
      cudaEventRecord(end.get(), stream) == cudaSuccess &&
      cudaEventSynchronize(end.get()) == cudaSuccess &&
      cudaEventElapsedTime(&milliseconds, start.get(), end.get()) == cudaSuccess &&
      milliseconds > 0;
  if (!measured) {
    // Whatever was queued must be finished before the buffers go.
    (void)cudaStreamSynchronize(stream);
    (void)cudaGetLastError();
    return fallback_bandwidth;
  }
  return static_cast<double>(bandwidth_probe_bytes) / (milliseconds * 1e-3);
}

void* CudaDevice::allocate(std::size_t bytes) {
  CurrentDeviceGuard guard(ordinal_);
  void* pointer = nullptr;
  // At least one byte: cudaMalloc(0) succeeds with a null pointer, which would read as failure.
  if (cudaMalloc(&pointer, std::max<std::size_t>(bytes, 1)) != cudaSuccess) {
    // Out of memory is not sticky, but it stays this thread's last error; cleared so that it is
    // not reported later as a failure of an unrelated kernel launch.
    (void)cudaGetLastError();
    return nullptr;
  }
  return pointer;
}

void CudaDevice::deallocate(void* pointer) {
  if (pointer == nullptr) return;
  CurrentDeviceGuard guard(ordinal_);
  if (cudaFree(pointer) != cudaSuccess) (void)cudaGetLastError();
}

template <class Work>
void CudaDevice::queue(int stream, PendingOperation operation, Work&& work) {
  cudaStream_t cuda_stream = streams_[static_cast<std::size_t>(stream)]->context.stream();

  const char* call = "cudaEventCreate";
  cudaError_t status = events_.acquire(operation.start);
  if (status == cudaSuccess) status = events_.acquire(operation.end);
  if (status == cudaSuccess) {
    call = "cudaEventRecord";
    status = cudaEventRecord(operation.start.get(), cuda_stream);
  }
  if (status != cudaSuccess) {
    // Nothing was queued: the operation completes as soon as the progress thread sees it.
    (void)cudaGetLastError();
    operation.error = describe_failure(operation.label, label_, status, call);
    operation.end.reset();
    poller_.push(stream, std::move(operation));
    return;
  }

  status = work(cuda_stream, operation);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    if (operation.error.empty()) {
      operation.error = describe_failure(operation.label, label_, status);
    }
  }

  // Recorded even after a failure: an implementation may have queued work before failing, and
  // its completion must not be reported before that work has finished.
  status = cudaEventRecord(operation.end.get(), cuda_stream);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    if (operation.error.empty()) {
      operation.error = describe_failure(operation.label, label_, status, "cudaEventRecord");
    }
    // Without an end event the only way to know that what was queued has finished (and that a
    // copy's host memory may be released) is to wait for the stream here.
    (void)cudaStreamSynchronize(cuda_stream);
    (void)cudaGetLastError();
    operation.end.reset();
  }
  poller_.push(stream, std::move(operation));
}

void CudaDevice::copy_to_device(const BlockCopy& copy, Completion done) {
  queue_copy(streams(), copy, cudaMemcpyHostToDevice, std::move(done));
}

void CudaDevice::copy_to_host(const BlockCopy& copy, Completion done) {
  queue_copy(streams() + 1, copy, cudaMemcpyDeviceToHost, std::move(done));
}

void CudaDevice::queue_copy(int stream, const BlockCopy& copy, cudaMemcpyKind kind,
                            Completion done) {
  Stream& target = *streams_.at(static_cast<std::size_t>(stream));
  const bool to_device = kind == cudaMemcpyHostToDevice;
  // One column, or columns back to back on both sides, is a plain copy: cheaper to set up, and
  // free of cudaMemcpy2D's limit on pitches.
  const bool contiguous = copy.columns <= 1 ||
                          (copy.source_pitch == copy.width && copy.destination_pitch == copy.width);
  PendingOperation operation;
  if (contiguous) {
    operation.label.operation =
        to_device ? "cudaMemcpyAsync host->device" : "cudaMemcpyAsync device->host";
  } else {
    operation.label.operation =
        to_device ? "cudaMemcpy2DAsync host->device" : "cudaMemcpy2DAsync device->host";
  }
  operation.label.bytes = copy.bytes();
  operation.done = std::move(done);

  CurrentDeviceGuard guard(ordinal_);
  RecursiveMutexLock lock(target.queue_mutex);
  queue(stream, std::move(operation), [&](cudaStream_t cuda_stream, PendingOperation&) {
    if (copy.bytes() == 0) return cudaSuccess;
    if (contiguous) {
      return cudaMemcpyAsync(copy.destination, copy.source, copy.bytes(), kind, cuda_stream);
    }
    return cudaMemcpy2DAsync(copy.destination, copy.destination_pitch, copy.source,
                             copy.source_pitch, copy.width, copy.columns, kind, cuda_stream);
  });
}

void CudaDevice::execute(int stream, Task& task, Completion done) {
  Stream& target = *streams_.at(static_cast<std::size_t>(stream));
  PendingOperation operation;
  operation.label.operation = "task";
  operation.label.task_name = task.name != nullptr ? task.name : "(unnamed)";
  operation.done = std::move(done);

  CurrentDeviceGuard guard(ordinal_);
  RecursiveMutexLock lock(target.queue_mutex);
  queue(stream, std::move(operation), [&](cudaStream_t, PendingOperation& queued) {
    if (task.invoke_cuda == nullptr) {
      queued.error = describe(queued.label) + " has no CUDA implementation";
      return cudaSuccess;
    }
    // A stale error left on this thread would otherwise be taken for a failed launch below.
    (void)cudaGetLastError();
    try {
      fill_partials_with_identity(task, &target.context);
      run_body(task, [&] { task.invoke_cuda(task.closure, task.accesses, target.context); });
    } catch (const std::exception& thrown) {
      queued.exception = std::current_exception();
      queued.error = thrown.what();
    } catch (...) {
      queued.exception = std::current_exception();
      queued.error = describe(queued.label) + " threw an exception that is not a std::exception";
    }
    // A kernel launch (<<<...>>>) returns nothing: an invalid configuration or a missing kernel
    // image for this GPU shows up only here.
    return cudaGetLastError();
  });
}

std::string CudaDevice::merge_partials(const ReductionOps& ops, void* into, const void* from,
                                       std::size_t count) {
  CurrentDeviceGuard guard(ordinal_);
  try {
    if (!merge_context_) merge_context_ = std::make_unique<StreamContext>(ordinal_);
    (void)cudaGetLastError();
    ops.cuda_merge(*merge_context_, into, from, count);
    cudaError_t status = cudaGetLastError();
    if (status == cudaSuccess) status = cudaStreamSynchronize(merge_context_->stream());
    if (status != cudaSuccess)
      return std::string("merging reduction partials: ") + cudaGetErrorString(status);
  } catch (...) {
    return describe(std::current_exception());
  }
  return {};
}

bool CudaDevice::register_host_memory(void* pointer, std::size_t bytes) {
  if (pointer == nullptr || bytes == 0) return false;
  CurrentDeviceGuard guard(ordinal_);
  // Best effort. Portable: one registration serves every GPU. A range that overlaps one
  // registered already (by the runtime or the user) is refused: it stays as it is.
  if (cudaHostRegister(pointer, bytes, cudaHostRegisterPortable) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return true;
}

void CudaDevice::unregister_host_memory(void* pointer) {
  if (pointer == nullptr) return;
  CurrentDeviceGuard guard(ordinal_);
  if (cudaHostUnregister(pointer) != cudaSuccess) (void)cudaGetLastError();
}

std::vector<std::unique_ptr<Device>> open_cuda_devices(int max_devices, std::size_t memory_limit,
                                                       std::string& note) {
  std::vector<std::unique_ptr<Device>> devices;
  if (max_devices == 0) {
    note = "GPUs not used (0 requested)";
    return devices;
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    note = status != cudaSuccess
               ? std::string("no GPU found (CUDA: ") + cudaGetErrorString(status) + ")"
               : std::string("no GPU found");
    return devices;
  }

  const int wanted = max_devices < 0 ? count : std::min(count, max_devices);
  std::string opened;
  std::string skipped;
  for (int ordinal = 0; ordinal < wanted; ++ordinal) {
    try {
      auto device = std::make_unique<CudaDevice>(ordinal, default_streams, memory_limit);
      if (!opened.empty()) opened += ", ";
      opened += device->name() + " " + format_bytes(device->memory_capacity());
      devices.push_back(std::move(device));
    } catch (const std::exception& failure) {
      skipped += "; " + device_label(ordinal) + " not used: " + failure.what();
    }
  }
  note = std::to_string(devices.size()) + (devices.size() == 1 ? " GPU" : " GPUs");
  if (wanted < count) note += " (of " + std::to_string(count) + ")";
  if (!opened.empty()) note += ": " + opened;
  note += skipped;
  return devices;
}

DeviceBackend cuda_device_kind() {
  return {"cuda", ImplementationSlot::cuda,
          [](const Config& config, std::vector<std::unique_ptr<Device>>& devices) {
            std::string note;
            for (auto& device : open_cuda_devices(config.gpus, config.device_memory_limit, note))
              devices.push_back(std::move(device));
            return "GPUs: " + note;
          }};
}

}  // namespace versa::detail
