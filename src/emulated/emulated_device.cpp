#include "emulated/emulated_device.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <optional>
#include <stdexcept>

#include "base/failure.hpp"
#include "base/task.hpp"
#include "base/timer_slack.hpp"
#include "data/partial_identity.hpp"

namespace versa::detail {

namespace {
using Clock = std::chrono::steady_clock;

constexpr std::align_val_t buffer_alignment{64};

// Runs `move` (which moves the bytes and returns the operation's result), then waits out the rest
// of the `modelled` seconds the link takes; a failure too is known when the operation ends.
template <class Move>
OperationResult for_modelled_time(double modelled, Move move) {
  const auto start = Clock::now();
  const auto end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(modelled));
  OperationResult result = move();
  std::this_thread::sleep_until(end);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

// `config`, once every field is known to be in range (else std::invalid_argument naming it).
const EmulatedDeviceConfig& validated(const EmulatedDeviceConfig& config, int index) {
  const std::string field = "Config::emulated_devices[" + std::to_string(index) + "].";
  if (config.memory_bytes < 64)
    throw std::invalid_argument(field + "memory_bytes = " + std::to_string(config.memory_bytes) +
                                " is too small: expected at least 64");
  if (!(config.bandwidth_bytes_per_s >= 0))
    throw std::invalid_argument(field + "bandwidth_bytes_per_s must not be negative");
  if (!(config.latency_s >= 0 && config.latency_s < 1))
    throw std::invalid_argument(field + "latency_s must be in [0, 1) seconds");
  if (config.streams < 1 || config.streams > 64)
    throw std::invalid_argument(field + "streams = " + std::to_string(config.streams) +
                                " is out of range: expected 1 to 64");
  if (!(config.peer_bandwidth_bytes_per_s >= 0))
    throw std::invalid_argument(field + "peer_bandwidth_bytes_per_s must not be negative");
  if (!(config.peer_latency_s >= 0 && config.peer_latency_s < 1))
    throw std::invalid_argument(field + "peer_latency_s must be in [0, 1) seconds");
  if (config.concurrent_kernels < 1 || config.concurrent_kernels > config.streams)
    throw std::invalid_argument(
        field + "concurrent_kernels = " + std::to_string(config.concurrent_kernels) +
        " is out of range: expected 1 to streams (" + std::to_string(config.streams) + ")");
  if (config.panel_kernels < 0 || config.panel_kernels > config.streams)
    throw std::invalid_argument(field + "panel_kernels = " + std::to_string(config.panel_kernels) +
                                " is out of range: expected 0 to streams (" +
                                std::to_string(config.streams) + ")");
  if (config.panel_kernels > 0 && !config.priority_streams)
    throw std::invalid_argument(field + "panel_kernels = " + std::to_string(config.panel_kernels) +
                                " needs priority_streams: the panel's engine runs their kernels");
  return config;
}
}  // namespace

EmulatedDevice::EmulatedDevice(int index, const EmulatedDeviceConfig& config,
                               std::size_t memory_limit)
    : config_(validated(config, index)),
      name_("emulated:" + std::to_string(index)),
      capacity_(memory_limit != 0 && memory_limit < config.memory_bytes ? memory_limit
                                                                        : config.memory_bytes),
      compute_engine_(config.concurrent_kernels),
      panel_engine_(std::max(config.panel_kernels, 1)) {
  for (int s = 0; s <= copy_out_stream(); ++s) {
    streams_.push_back(
        std::make_unique<Stream>(*this, s >= config_.streams && s < copy_in_stream()));
    Stream& stream = *streams_.back();
    stream.thread = std::thread([this, &stream] { serve(stream); });
  }
}

EmulatedDevice::~EmulatedDevice() {
  for (auto& stream : streams_) {
    {
      MutexLock guard(stream->mutex);
      stream->stopping = true;
    }
    stream->ready.notify_one();
  }
  for (auto& stream : streams_) stream->thread.join();
}

void* EmulatedDevice::allocate(std::size_t bytes) {
  const std::uint64_t n = allocations_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (config_.fail_allocations_from != 0 && n >= config_.fail_allocations_from) return nullptr;
  return ::operator new(bytes, buffer_alignment, std::nothrow);
}

void EmulatedDevice::deallocate(void* pointer) { ::operator delete(pointer, buffer_alignment); }

void EmulatedDevice::copy_to_device(const BlockCopy& copy, Completion done) {
  enqueue(copy_in_stream(), Operation{Engine::copy_in, copy, nullptr, std::move(done), {}});
}

void EmulatedDevice::fill_zero(void* data, std::size_t bytes, Completion done) {
  enqueue(copy_in_stream(), Operation{Engine::zero_in,
                                      BlockCopy{data, bytes, nullptr, bytes, bytes, 1},
                                      nullptr,
                                      std::move(done),
                                      {}});
}

void EmulatedDevice::copy_to_host(const BlockCopy& copy, Completion done) {
  enqueue(copy_out_stream(), Operation{Engine::copy_out, copy, nullptr, std::move(done), {}});
}

// Both ends must have the link: a device without one is reached through the host.
bool EmulatedDevice::has_peer_link(const Device& peer) const {
  const auto* other = dynamic_cast<const EmulatedDevice*>(&peer);
  return other && other != this && config_.peer_link && other->config_.peer_link;
}

// On this device's copy-in stream and engine: the link's receiving end, which a GPU's copy
// engine drives.
void EmulatedDevice::copy_from_peer(const Device& peer, const BlockCopy& copy, Completion done) {
  if (!has_peer_link(peer)) {
    Device::copy_from_peer(peer, copy, std::move(done));
    return;
  }
  enqueue(copy_in_stream(), Operation{Engine::peer_in, copy, nullptr, std::move(done), {}});
}

void EmulatedDevice::execute(int stream, Task& task, Completion done) {
  if (!config_.bodies_at_launch) {
    enqueue(stream, Operation{Engine::compute, BlockCopy{}, &task, std::move(done), {}});
    return;
  }
  OperationResult ran = run_task(task, nullptr);
  enqueue(stream,
          Operation{Engine::compute, BlockCopy{}, nullptr, std::move(done), std::move(ran)});
}

// Device memory is host memory here: the CPU merge runs on the caller's thread, on the compute
// engine like a kernel.
std::string EmulatedDevice::merge_partials(const ReductionOps& ops, void* into, const void* from,
                                           std::size_t count) {
  const ComputeSlot slot(compute_engine_);
  try {
    ops.merge(into, from, count);
  } catch (...) {
    return describe(std::current_exception());
  }
  return {};
}

void EmulatedDevice::enqueue(int stream, Operation operation) {
  Stream& s = *streams_.at(static_cast<std::size_t>(stream));
  MutexLock guard(s.mutex);
  s.queue.push_back(std::move(operation));
  s.ready.notify_one();
}

void EmulatedDevice::serve(Stream& stream) {
  // Modelled copy times and benchmark kernels are sleeps: late ones would distort the model.
  use_fine_timer_slack();
  const BodyLaneScope lane(stream);
  for (;;) {
    Operation operation;
    {
      MutexLock lock(stream.mutex);
      stream.ready.wait(lock.native(), [&]() VERSA_REQUIRES(stream.mutex) {
        return stream.stopping || !stream.queue.empty();
      });
      if (stream.queue.empty()) return;
      operation = std::move(stream.queue.front());
      stream.queue.pop_front();
    }
    complete(stream, operation);
  }
}

bool EmulatedDevice::Stream::help(std::chrono::microseconds wait) {
  Operation operation;
  {
    MutexLock lock(mutex);
    ready.wait_for(lock.native(), wait,
                   [&]() VERSA_REQUIRES(mutex) { return stopping || !queue.empty(); });
    if (queue.empty()) return false;
    operation = std::move(queue.front());
    queue.pop_front();
  }
  device.complete(*this, operation);
  return true;
}

void EmulatedDevice::complete(const Stream& stream, Operation& operation) {
  OperationResult result = run(stream, operation);
  operation.done(std::move(result));
}

OperationResult EmulatedDevice::run(const Stream& stream, Operation& operation) {
  switch (operation.engine) {
    case Engine::copy_in: {
      MutexLock engine(copy_in_engine_);
      return copy(operation.copy, config_.bandwidth_bytes_per_s, config_.latency_s);
    }
    case Engine::copy_out: {
      MutexLock engine(copy_out_engine_);
      return copy(operation.copy, config_.bandwidth_bytes_per_s, config_.latency_s);
    }
    case Engine::peer_in: {
      MutexLock engine(copy_in_engine_);
      return copy(operation.copy, config_.peer_bandwidth_bytes_per_s, config_.peer_latency_s);
    }
    case Engine::zero_in: {
      MutexLock engine(copy_in_engine_);
      return for_modelled_time(config_.latency_s, [&] {
        std::memset(operation.copy.destination, 0, operation.copy.bytes());
        return OperationResult{};
      });
    }
    case Engine::compute:
      break;
  }
  if (!operation.task) {
    // The kernel's turn on the engine.
    const ComputeSlot slot(engine_of(stream), stream.high_priority);
    return std::move(operation.ran);
  }
  return run_task(*operation.task, &stream);
}

OperationResult EmulatedDevice::run_task(Task& task, const Stream* stream) {
  std::optional<ComputeSlot> slot;
  if (stream) slot.emplace(engine_of(*stream), stream->high_priority);
  OperationResult result;
  const auto start = Clock::now();
  try {
    fill_partials_with_identity(task, nullptr);
    run_body(task, [&task] { task.invoke_emulated(task.closure, task.accesses); });
  } catch (...) {
    result.exception = std::current_exception();
    result.error = describe(result.exception);
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

OperationResult EmulatedDevice::copy(const BlockCopy& copy, double bandwidth, double latency) {
  const std::uint64_t n = copies_.fetch_add(1, std::memory_order_relaxed) + 1;
  double modelled = latency;
  if (bandwidth > 0) modelled += static_cast<double>(copy.bytes()) / bandwidth;
  return for_modelled_time(modelled, [&] {
    OperationResult result;
    if (n == config_.fail_copy_at) {
      result.error = "injected copy failure (copy " + std::to_string(n) + ")";
      return result;
    }
    auto* destination = static_cast<std::byte*>(copy.destination);
    const auto* source = static_cast<const std::byte*>(copy.source);
    if (copy.destination_pitch == copy.width && copy.source_pitch == copy.width) {
      std::memcpy(destination, source, copy.bytes());
    } else {
      for (std::size_t c = 0; c < copy.columns; ++c)
        std::memcpy(destination + c * copy.destination_pitch, source + c * copy.source_pitch,
                    copy.width);
    }
    return result;
  });
}

}  // namespace versa::detail
