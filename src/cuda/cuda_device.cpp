#include "cuda/cuda_device.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <utility>
#include <vector>

#include "base/failure.hpp"
#include "base/names.hpp"
#include "base/task.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/current_device.hpp"
#include "data/partial_identity.hpp"
#include "device/device_registry.hpp"

namespace versa::detail {

namespace {

std::string device_label(int ordinal) { return "cuda:" + std::to_string(ordinal); }

std::string device_name(const std::string& label, int ordinal) {
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return label + " (unknown GPU)";
  }
  return label + " (" + properties.name + ")";
}

// "GPU-<32 hex digits>", as nvidia-smi prints it; the ordinal when the properties are missing.
std::string device_uuid(int ordinal) {
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return "ordinal-" + std::to_string(ordinal);
  }
  std::string uuid = "GPU-";
  constexpr char digits[] = "0123456789abcdef";
  for (const char byte : properties.uuid.bytes) {
    const auto value = static_cast<unsigned char>(byte);
    uuid += digits[value >> 4];
    uuid += digits[value & 15];
  }
  return uuid;
}

// CUDA feeds a GPU's streams through CUDA_DEVICE_MAX_CONNECTIONS hardware queues, 8 unless
// the environment says otherwise, read when the process first uses CUDA. A device here has twice
// Config::cuda_streams kernel streams, two copy streams and its memory pool's: 11 by default,
// twice that for two devices of one GPU. Streams beyond the queues share one, and then a kernel
// (or a copy) waits behind another stream's kernel for nothing. So Versa asks for the most, 32,
// unless the user chose a number; it cannot once the process has used CUDA before the runtime.
void ask_for_every_hardware_queue() { ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0); }

int checked_stream_count(int streams) {
  if (streams < 1) throw std::invalid_argument("a CUDA device needs at least one stream");
  return streams;
}

}  // namespace

CudaDevice::CudaDevice(int ordinal, int streams, std::size_t memory_limit, int entries,
                       std::string label, bool priority_streams, bool memory_pool, int panel_sms)
    : ordinal_(ordinal),
      label_(label.empty() ? device_label(ordinal) : std::move(label)),
      name_(device_name(label_, ordinal)),
      uuid_(device_uuid(ordinal)),
      kernel_streams_(checked_stream_count(streams)),
      priority_streams_(priority_streams ? streams : 0),
      memory_pool_(ordinal, memory_pool),
      events_(ordinal),
      partition_(panel_sms > 0 && priority_streams
                     ? std::make_unique<SmPartition>(ordinal, panel_sms)
                     : nullptr),
      poller_(ordinal, label_, copy_out_stream() + 1) {
  // The kernel streams, the high-priority ones, then the copies in and out, which use no SMs
  // and stay outside the partition.
  for (int index = 0; index <= copy_out_stream(); ++index) {
    const bool high_priority = index >= kernel_streams_ && index < copy_in_stream();
    streams_.push_back(std::make_unique<Stream>(
        ordinal, high_priority, index < copy_in_stream() ? partition_.get() : nullptr));
  }

  CurrentDeviceGuard guard(ordinal_);
  // Measured once the streams' library handles have taken their memory. The 10% left over is
  // for what is allocated outside the runtime's accounting: workspaces, cuBLAS and cuSOLVER
  // internals, the user's own allocations.
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  throw_if_failed(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  memory_capacity_ = free_bytes / 10 * 9 / static_cast<std::size_t>(std::max(entries, 1));
  if (memory_limit != 0) memory_capacity_ = std::min(memory_capacity_, memory_limit);
}

CudaDevice::~CudaDevice() = default;

void CudaDevice::copy_from_peer(const Device& peer, const BlockCopy& copy, Completion done) {
  if (!has_peer_link(peer)) {
    Device::copy_from_peer(peer, copy, std::move(done));  // reports the missing link
    return;
  }
  // Into this device: on its stream of copies in.
  queue_copy(copy_in_stream(), copy, cudaMemcpyDeviceToDevice, std::move(done),
             static_cast<const CudaDevice&>(peer).ordinal_);
}

void* CudaDevice::allocate(std::size_t bytes) {
  CurrentDeviceGuard guard(ordinal_);
  return memory_pool_.allocate(bytes);
}

void CudaDevice::deallocate(void* pointer) {
  CurrentDeviceGuard guard(ordinal_);
  memory_pool_.free(pointer);
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
  queue_copy(copy_in_stream(), copy, cudaMemcpyHostToDevice, std::move(done));
}

void CudaDevice::copy_to_host(const BlockCopy& copy, Completion done) {
  queue_copy(copy_out_stream(), copy, cudaMemcpyDeviceToHost, std::move(done));
}

void CudaDevice::fill_zero(void* data, std::size_t bytes, Completion done) {
  const int stream = copy_in_stream();
  Stream& target = *streams_.at(static_cast<std::size_t>(stream));
  PendingOperation operation;
  operation.label.operation = "cudaMemsetAsync";
  operation.label.bytes = bytes;
  operation.done = std::move(done);
  CurrentDeviceGuard guard(ordinal_);
  RecursiveMutexLock lock(target.queue_mutex);
  queue(stream, std::move(operation), [&](cudaStream_t cuda_stream, PendingOperation&) {
    return bytes == 0 ? cudaSuccess : cudaMemsetAsync(data, 0, bytes, cuda_stream);
  });
}

void CudaDevice::queue_copy(int stream, const BlockCopy& copy, cudaMemcpyKind kind, Completion done,
                            int from) {
  Stream& target = *streams_.at(static_cast<std::size_t>(stream));
  const bool peer = kind == cudaMemcpyDeviceToDevice;
  // One column, or columns back to back on both sides (device replicas are packed), is a plain
  // copy: cheaper to set up, and free of cudaMemcpy2D's limit on pitches.
  const bool contiguous = copy.columns <= 1 ||
                          (copy.source_pitch == copy.width && copy.destination_pitch == copy.width);
  PendingOperation operation;
  switch (kind) {
    case cudaMemcpyHostToDevice:
      operation.label.operation =
          contiguous ? "cudaMemcpyAsync host->device" : "cudaMemcpy2DAsync host->device";
      break;
    case cudaMemcpyDeviceToHost:
      operation.label.operation =
          contiguous ? "cudaMemcpyAsync device->host" : "cudaMemcpy2DAsync device->host";
      break;
    default:
      operation.label.operation =
          contiguous ? "cudaMemcpyPeerAsync device->device" : "cudaMemcpy2DAsync device->device";
  }
  operation.label.bytes = copy.bytes();
  operation.done = std::move(done);

  CurrentDeviceGuard guard(ordinal_);
  RecursiveMutexLock lock(target.queue_mutex);
  queue(stream, std::move(operation), [&](cudaStream_t cuda_stream, PendingOperation&) {
    if (copy.bytes() == 0) return cudaSuccess;
    if (contiguous && peer)
      return cudaMemcpyPeerAsync(copy.destination, ordinal_, copy.source, from, copy.bytes(),
                                 cuda_stream);
    if (contiguous)
      return cudaMemcpyAsync(copy.destination, copy.source, copy.bytes(), kind, cuda_stream);
    // Between devices, unified addressing tells them apart.
    return cudaMemcpy2DAsync(copy.destination, copy.destination_pitch, copy.source,
                             copy.source_pitch, copy.width, copy.columns,
                             peer ? cudaMemcpyDefault : kind, cuda_stream);
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
    // Those of an implementation on this stream that waits for this task (run_body's help).
    std::vector<DeviceWordCheck> enclosing = target.context.take_checks();
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
    // Also after a throw: the completion gives their slots back.
    queued.checks = target.context.take_checks();
    target.context.restore_checks(std::move(enclosing));
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

std::vector<std::unique_ptr<Device>> open_cuda_devices(const Config& config, std::string& note) {
  std::vector<std::unique_ptr<Device>> devices;
  if (config.cuda_devices.empty() && config.gpus == 0) {
    note = "GPUs not used (0 requested)";
    return devices;
  }
  ask_for_every_hardware_queue();
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    note = status != cudaSuccess
               ? std::string("no GPU found (CUDA: ") + cudaGetErrorString(status) + ")"
               : std::string("no GPU found");
    return devices;
  }

  std::vector<int> ordinals = config.cuda_devices;
  const bool listed = !ordinals.empty();
  if (!listed)
    for (int ordinal = 0; ordinal < (config.gpus < 0 ? count : std::min(count, config.gpus));
         ++ordinal)
      ordinals.push_back(ordinal);
  std::vector<int> entries(static_cast<std::size_t>(count), 0);  // per GPU
  for (const int ordinal : ordinals)
    if (ordinal < count) ++entries[static_cast<std::size_t>(ordinal)];
  std::vector<int> seen(static_cast<std::size_t>(count), 0);
  std::vector<CudaDevice*> opened_devices;
  std::string opened;
  std::string skipped;
  for (const int ordinal : ordinals) {
    if (ordinal >= count) {
      skipped += "; " + device_label(ordinal) + " not used: no such GPU";
      continue;
    }
    const int shared_by = entries[static_cast<std::size_t>(ordinal)];
    const int entry = seen[static_cast<std::size_t>(ordinal)]++;
    std::string label = device_label(ordinal);
    if (shared_by > 1) label += '.' + std::to_string(entry);
    try {
      auto device = std::make_unique<CudaDevice>(
          ordinal, config.cuda_streams, config.device_memory_limit, shared_by, label,
          config.cuda_priority_streams, config.cuda_memory_pool, config.cuda_panel_sms);
      if (!opened.empty()) opened += ", ";
      opened += device->name() + " " + format_bytes(device->memory_capacity());
      if (device->panel_sms() > 0)
        opened += " (panel on " + std::to_string(device->panel_sms()) + " SMs, the rest on " +
                  std::to_string(device->other_sms()) + ")";
      opened_devices.push_back(device.get());
      devices.push_back(std::move(device));
    } catch (const std::exception& failure) {
      skipped += "; " + label + " not used: " + failure.what();
    }
  }

  const std::string cost_file =
      config.link_cost_file.empty() ? LinkCosts::default_path() : config.link_cost_file;
  LinkCosts costs(cost_file == "none" ? std::string() : cost_file);
  for (CudaDevice* device : opened_devices) device->calibrate_host_link(costs);
  for (CudaDevice* to : opened_devices)
    for (CudaDevice* from : opened_devices)
      if (from != to) to->link_peer(*from, costs);
  const std::string unsaved = costs.save();

  note = std::to_string(devices.size()) + (devices.size() == 1 ? " GPU" : " GPUs");
  if (!listed && static_cast<int>(ordinals.size()) < count)
    note += " (of " + std::to_string(count) + ")";
  if (!opened.empty()) note += ": " + opened;
  note += skipped;
  if (!unsaved.empty()) note += "; link costs not kept: " + unsaved;
  return devices;
}

DeviceBackend cuda_device_kind() {
  return {"cuda", ImplementationSlot::cuda,
          [](const Config& config, std::vector<std::unique_ptr<Device>>& devices) {
            std::string note;
            for (auto& device : open_cuda_devices(config, note))
              devices.push_back(std::move(device));
            return "GPUs: " + note;
          }};
}

}  // namespace versa::detail
