// The interface of an accelerator: a memory node with its own allocator and asynchronous
// streams that copy blocks between host and device memory and run task implementations.
// Implemented by the CUDA backend (src/cuda) and the emulated accelerator (src/emulated); the
// runtime's DeviceWorker drives either through this interface only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "device/body_lane.hpp"

namespace versa::detail {

class Task;
struct ReductionOps;

// A kind of memory node and executor: the CPU, or a kind registered in the device registry
// (device/device_registry.hpp). The kinds built into Versa have fixed values (their order of
// registration); other kinds get the next values when they register.
enum class DeviceKind : std::uint8_t { cpu = 0, cuda = 1, emulated = 2 };

// A column-major block copy: `columns` columns of `width` bytes, consecutive columns `pitch`
// bytes apart on each side (cudaMemcpy2D's shape).
struct BlockCopy {
  void* destination = nullptr;
  std::size_t destination_pitch = 0;
  const void* source = nullptr;
  std::size_t source_pitch = 0;
  std::size_t width = 0;
  std::size_t columns = 0;

  std::size_t bytes() const { return width * columns; }
};

// How an asynchronous operation ended.
struct OperationResult {
  std::string error;             // empty on success, else what went wrong (for the message)
  std::exception_ptr exception;  // the exception a task implementation threw, if it threw
  double seconds = 0;            // duration measured on the device (kernel or copy)
};

// Called exactly once when an operation has completed, from a thread of the device (an emulated
// stream thread, the CUDA device's progress thread), never from inside the call that queued it. It
// must be short and must not call into any Device (CUDA forbids API calls in stream callbacks): the
// runtime's completions only post a message to the device worker.
using Completion = std::function<void(OperationResult result)>;

class Device {
 public:
  virtual ~Device() = default;

  virtual DeviceKind kind() const = 0;
  // For messages and the start-up summary: "cuda:0 (NVIDIA H100 80GB HBM3)", "emulated:1".
  virtual const std::string& name() const = 0;
  // Bytes of device memory the runtime may use for replicas.
  virtual std::size_t memory_capacity() const = 0;
  // Streams that run task implementations; operations on one stream run in the order they
  // were queued. Copies have their own stream per direction, so that the inputs of the next
  // tasks move while kernels run.
  virtual int streams() const = 0;
  // Kernel streams of high priority besides those: the device starts their kernels' work before
  // that of the other streams' kernels when both wait for room on it (CUDA's stream priorities,
  // which do not preempt what already runs). The device worker launches there the tasks with a
  // positive priority, whose kernels would otherwise wait behind those of the tasks launched
  // before them: on a GPU shared by a few streams, a chain of small kernels on the critical path
  // (a panel's factorisation) behind the large products of the other streams. None by default.
  virtual int priority_streams() const { return 0; }
  // Kernels that run at once, sharing the device (a GPU runs its streams' kernels side by side,
  // each slower than alone). Placement divides the work queued here by it, as it divides the
  // CPU's among the workers, since the measured time of each kernel includes that sharing.
  virtual int concurrent_kernels() const { return 1; }
  // Host<->device copy speed (bytes per second) and fixed cost per copy (seconds), as the
  // placement policy should assume them.
  virtual double bandwidth() const = 0;
  virtual double latency() const = 0;

  // Device memory. Returns null when the allocation fails (the caller evicts and retries, or
  // reports the failure). May be called from any thread.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* pointer) = 0;

  // Queue a copy on the device's stream for that direction; thread-safe. Both sides must stay
  // valid until `done` is called.
  virtual void copy_to_device(const BlockCopy& copy, Completion done) = 0;
  virtual void copy_to_host(const BlockCopy& copy, Completion done) = 0;

  // Queue the filling of [data, data + bytes) of this device's memory with zero bytes, on the
  // stream that copies into the device; thread-safe. For data declared zero (HandleBase::
  // declare_zero): the replica is made on the device, without a copy over the host link. By
  // default, a copy of zeros from the host (a device kind that can do better overrides it).
  virtual void fill_zero(void* data, std::size_t bytes, Completion done) {
    auto zeros = std::make_shared<std::vector<std::byte>>(bytes);
    BlockCopy copy{data, bytes, zeros->data(), bytes, bytes, 1};
    copy_to_device(copy, [zeros, done = std::move(done)](OperationResult result) mutable {
      done(std::move(result));
    });
  }

  // Whether this device can copy from `peer`'s memory into its own directly (a peer link), so
  // that data moving from `peer` to here need not cross the host links. Symmetric.
  virtual bool has_peer_link(const Device& peer) const {
    (void)peer;
    return false;
  }
  // The speed (bytes per second; 0: as fast as memcpy) and fixed cost per copy (seconds) of
  // copies from `peer` into this device, as placement should assume them (has_peer_link(peer)).
  virtual double peer_bandwidth(const Device& peer) const {
    (void)peer;
    return 0;
  }
  virtual double peer_latency(const Device& peer) const {
    (void)peer;
    return 0;
  }
  // Queue a copy from `peer`'s memory into this device's (has_peer_link(peer)) on the stream
  // that copies into this device; thread-safe. Both sides must stay valid until `done`.
  virtual void copy_from_peer(const Device& peer, const BlockCopy& copy, Completion done) {
    (void)copy;
    OperationResult result;
    result.error = "no peer link from " + peer.name() + " to " + name();
    done(std::move(result));
  }

  // Queue `task`'s implementation for this device on `stream` (0 <= stream < streams() +
  // priority_streams(); the high-priority streams come last). Its accesses' data and layout
  // already point at this device's replicas. `done` reports the kernel time and any failure (an
  // exception thrown by the implementation, a launch or execution error).
  virtual void execute(int stream, Task& task, Completion done) = 0;

  // Whether execute() runs the task's body on the calling thread before it returns (the host
  // code of a CUDA task), rather than later on a thread of the device.
  virtual bool runs_bodies_at_launch() const { return false; }

  // Merges the reduction partial `from` into `into` (`count` elements each, in this device's
  // memory) with `ops` and waits for it. Returns "" or what went wrong. Called by the device
  // worker only.
  virtual std::string merge_partials(const ReductionOps& ops, void* into, const void* from,
                                     std::size_t count) = 0;

  // Makes copies from and to [pointer, pointer + bytes) faster where the device can (CUDA
  // page-locks the host memory, for every GPU at once). Returns whether it did; failure only
  // costs speed. Undo with unregister_host_memory(pointer).
  virtual bool register_host_memory(void* pointer, std::size_t bytes) {
    (void)pointer;
    (void)bytes;
    return false;
  }
  virtual void unregister_host_memory(void* pointer) { (void)pointer; }
  // Whether host memory should be registered for this device (register_host_memory does
  // something): the runtime then pins large handles.
  virtual bool pins_host_memory() const { return false; }

  // The runtime that runs this device's task bodies (set once, before any task). Without one
  // (a device driven alone, as in its own tests) bodies run as plain calls. A device that runs
  // its tasks through another Device passes it on.
  virtual void set_body_host(BodyHost* host) { body_host_ = host; }

 protected:
  // Runs `body()` as the body of `task` on the calling thread (BodyHost::run_body).
  template <class Body>
  void run_body(Task& task, Body&& body) {
    if (!body_host_) {
      body();
      return;
    }
    body_host_->run_body(
        task, [](void* context) { (*static_cast<std::remove_reference_t<Body>*>(context))(); },
        &body);
  }

 private:
  BodyHost* body_host_ = nullptr;
};

}  // namespace versa::detail
