// The emulated accelerator (DESIGN section 5): a memory node in host memory with its own
// capacity, streams served by their own threads, modelled copy bandwidth and latency, and fault
// injection. Tasks run through their emulated implementation (by default the CPU one).
//
// Like a GPU, it has a compute engine and one copy engine per direction: operations of
// different streams overlap unless they need the same engine, so a copy on one stream proceeds
// while a kernel runs on another. The compute engine runs up to `concurrent_kernels` kernels at
// once (by default one), those of the high-priority streams first when the device has them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "device/device.hpp"
#include "emulated/compute_engine.hpp"
#include "versa/config.hpp"

namespace versa::detail {

class EmulatedDevice final : public Device {
 public:
  // Device number `index` among the emulated ones; `memory_limit` (when not 0) caps the
  // configured capacity. Throws std::invalid_argument for an out-of-range configuration.
  EmulatedDevice(int index, const EmulatedDeviceConfig& config, std::size_t memory_limit);
  // Finishes the queued operations, then stops the stream threads.
  ~EmulatedDevice() override;

  DeviceKind kind() const override { return DeviceKind::emulated; }
  const std::string& name() const override { return name_; }
  std::size_t memory_capacity() const override { return capacity_; }
  int streams() const override { return config_.streams; }
  int priority_streams() const override { return config_.priority_streams ? config_.streams : 0; }
  int concurrent_kernels() const override { return config_.concurrent_kernels; }
  double bandwidth() const override { return config_.bandwidth_bytes_per_s; }
  double latency() const override { return config_.latency_s; }

  void* allocate(std::size_t bytes) override;
  void deallocate(void* pointer) override;
  void copy_to_device(const BlockCopy& copy, Completion done) override;
  // On the copy-in stream, as a device's memset: the copy's latency, no link bandwidth.
  void fill_zero(void* data, std::size_t bytes, Completion done) override;
  void copy_to_host(const BlockCopy& copy, Completion done) override;
  bool has_peer_link(const Device& peer) const override;
  double peer_bandwidth(const Device&) const override { return config_.peer_bandwidth_bytes_per_s; }
  double peer_latency(const Device&) const override { return config_.peer_latency_s; }
  void copy_from_peer(const Device& peer, const BlockCopy& copy, Completion done) override;
  void execute(int stream, Task& task, Completion done) override;
  bool runs_bodies_at_launch() const override { return config_.bodies_at_launch; }
  std::string merge_partials(const ReductionOps& ops, void* into, const void* from,
                             std::size_t count) override;

 private:
  enum class Engine { copy_in, copy_out, peer_in, zero_in, compute };
  struct Operation {
    Engine engine;
    BlockCopy copy;
    Task* task = nullptr;  // a kernel whose body runs here; null with bodies_at_launch
    Completion done;
    OperationResult ran;  // with bodies_at_launch: how the body that ran at launch ended
  };
  // A stream's thread is the lane of the bodies it runs: one that waits for its children runs
  // the stream's next operations meanwhile, and lets the other streams' kernels compute.
  struct Stream final : BodyLane {
    Stream(EmulatedDevice& owner, bool high_priority)
        : device(owner), high_priority(high_priority) {}
    bool help(std::chrono::microseconds wait) override;
    void pause() override { device.engine_of(*this).release(); }
    void resume() override { device.engine_of(*this).acquire(high_priority); }

    EmulatedDevice& device;
    const bool high_priority;  // its kernels take the compute engine first
    Mutex mutex;
    std::condition_variable ready;
    std::deque<Operation> queue VERSA_GUARDED_BY(mutex);
    bool stopping VERSA_GUARDED_BY(mutex) = false;
    std::thread thread;
  };

  void enqueue(int stream, Operation operation);
  void serve(Stream& stream);
  // Runs `operation`, queued on `stream`, and reports its end.
  void complete(const Stream& stream, Operation& operation);
  OperationResult run(const Stream& stream, Operation& operation);
  // Runs `task`'s body on the calling thread, on the compute engine (with the priority of
  // `stream`) unless `stream` is null: the body runs at launch, and the stream models the kernel.
  OperationResult run_task(Task& task, const Stream* stream);
  // The engine `stream`'s kernels run on: the panel's for a high-priority stream when the
  // device has one (EmulatedDeviceConfig::panel_kernels), else the compute engine.
  ComputeEngine& engine_of(const Stream& stream) {
    return stream.high_priority && config_.panel_kernels > 0 ? panel_engine_ : compute_engine_;
  }
  // The streams of copies into and out of the device, after the kernel streams.
  int copy_in_stream() const { return streams() + priority_streams(); }
  int copy_out_stream() const { return copy_in_stream() + 1; }
  // Copies the block, then waits out the rest of the modelled link's time.
  OperationResult copy(const BlockCopy& copy, double bandwidth, double latency);

  const EmulatedDeviceConfig config_;
  const std::string name_;
  const std::size_t capacity_;
  // The kernel streams, the high-priority ones, then the host-to-device and the device-to-host
  // copy streams.
  std::vector<std::unique_ptr<Stream>> streams_;
  // The engines: a copy holds its engine's lock while it runs, a kernel or a merge a slot of the
  // compute engine, or a high-priority stream's kernel one of the panel's engine when the device
  // has one (unused otherwise).
  Mutex copy_in_engine_, copy_out_engine_;
  ComputeEngine compute_engine_;
  ComputeEngine panel_engine_;
  // Counters for fault injection.
  std::atomic<std::uint64_t> allocations_{0};
  std::atomic<std::uint64_t> copies_{0};
};

}  // namespace versa::detail
