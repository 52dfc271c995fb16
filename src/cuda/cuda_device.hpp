// One CUDA GPU as a Device: its memory, a few streams that copy and run task implementations,
// and a progress thread that reports completions.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.hpp"
#include "cuda/completion_poller.hpp"
#include "cuda/device_memory_pool.hpp"
#include "cuda/event_pool.hpp"
#include "cuda/sm_partition.hpp"
#include "cuda/stream_context.hpp"
#include "device/device.hpp"
#include "device/link_costs.hpp"
#include "versa/config.hpp"

namespace versa::detail {

// Threads: any thread may call any member. Operations of one stream are queued under that
// stream's lock (so that their order on the stream, their events and their order in the
// progress thread's FIFO agree); the progress thread polls their end events and calls the
// completions. Every completion runs on the progress thread, never inside the call that queued
// the operation, including when queueing fails.
class CudaDevice final : public Device {
 public:
  // Opens GPU `ordinal` with `streams` kernel streams (plus one copy stream per direction), as
  // one of `entries` devices that share that GPU (Config::cuda_devices naming it more than
  // once): it takes that share of the GPU's free memory. `memory_limit` (bytes, 0: none) caps
  // memory_capacity(). `label` names it in messages ("cuda:0" by default; "cuda:0.1" for the
  // second entry of GPU 0). With `priority_streams`, as many streams again of the GPU's highest
  // priority (Device::priority_streams). With `memory_pool`, buffers come from a pool of its
  // own in stream order (DeviceMemoryPool). With `panel_sms` > 0 (and `priority_streams`), the
  // high-priority streams run on that many of the GPU's SMs and the other kernel streams on the
  // rest (SmPartition). Until calibrate_host_link(), bandwidth() and latency() are a PCIe link's
  // typical figures. Throws CudaError when the device or its streams and handles cannot be set
  // up.
  explicit CudaDevice(int ordinal, int streams = 4, std::size_t memory_limit = 0, int entries = 1,
                      std::string label = {}, bool priority_streams = true, bool memory_pool = true,
                      int panel_sms = 0);
  // Waits for every queued operation and reports its completion, then releases the streams,
  // handles and events. Memory from allocate() must have been deallocated.
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  DeviceKind kind() const override { return DeviceKind::cuda; }
  const std::string& name() const override { return name_; }
  std::size_t memory_capacity() const override { return memory_capacity_; }
  int streams() const override { return kernel_streams_; }
  int priority_streams() const override { return priority_streams_; }
  int concurrent_kernels() const override { return streams(); }
  double bandwidth() const override { return host_link_.bandwidth; }
  double latency() const override { return host_link_.latency; }

  // Copies from another CUDA device's memory go over the GPUs' peer link when
  // cudaDeviceCanAccessPeer allows it (NVLink, PCIe peer to peer), within the GPU when both are
  // entries of one GPU, and otherwise through host memory, staged by the driver
  // (cudaMemcpyPeerAsync): in every case without a host replica. Their cost is what link_peer
  // found.
  bool has_peer_link(const Device& peer) const override;
  double peer_bandwidth(const Device& peer) const override;
  double peer_latency(const Device& peer) const override;
  void copy_from_peer(const Device& peer, const BlockCopy& copy, Completion done) override;

  // Sets the host link's cost: from `costs` when it holds this GPU's, else measured (a few
  // milliseconds) and put there.
  void calibrate_host_link(LinkCosts& costs);
  // Makes copies from `from` possible: enables peer access to its GPU when the GPUs allow it
  // (once per pair of GPUs; `from`'s memory pool lets this GPU in) and sets the link's cost,
  // from `costs` or measured. Before any operation is queued, on one thread.
  void link_peer(CudaDevice& from, LinkCosts& costs);

  // Whether buffers come from the device's memory pool (Config::cuda_memory_pool).
  bool pooled_memory() const { return memory_pool_.pooled(); }

  void* allocate(std::size_t bytes) override;
  void deallocate(void* pointer) override;

  // `stream` out of range throws std::out_of_range (a caller bug).
  void copy_to_device(const BlockCopy& copy, Completion done) override;
  void copy_to_host(const BlockCopy& copy, Completion done) override;
  // cudaMemsetAsync on the stream of copies in.
  void fill_zero(void* data, std::size_t bytes, Completion done) override;
  void execute(int stream, Task& task, Completion done) override;
  bool runs_bodies_at_launch() const override { return true; }  // the host code queues kernels
  std::string merge_partials(const ReductionOps& ops, void* into, const void* from,
                             std::size_t count) override;

  bool register_host_memory(void* pointer, std::size_t bytes) override;
  void unregister_host_memory(void* pointer) override;
  bool pins_host_memory() const override { return true; }

  int ordinal() const { return ordinal_; }
  // The SMs of the high-priority streams' partition, and of the other kernel streams'; both 0
  // when the streams share every SM.
  int panel_sms() const { return partition_ ? partition_->panel_sms() : 0; }
  int other_sms() const { return partition_ ? partition_->other_sms() : 0; }

 private:
  struct Stream {
    Stream(int ordinal, bool high_priority, const SmPartition* partition)
        : context(ordinal, high_priority, partition) {}
    // Held while an operation is queued on the stream, its events recorded and it is pushed
    // to the progress thread; this also serialises the implementations that use `context`.
    // Recursive: a task's host code that waits for its children (sync) runs the device's
    // next tasks on this thread meanwhile, which may queue on this stream too.
    RecursiveMutex queue_mutex;
    // Not annotated as guarded by queue_mutex: its stream handle never changes and is read
    // without the lock (the bandwidth probe); what needs the lock is the implementations' use
    // of its library handles and workspace, which execute() runs under it.
    StreamContext context;
  };

  // Queues `copy` in direction `kind` on `stream`; cudaMemcpyDeviceToDevice copies from GPU
  // `from`'s memory.
  void queue_copy(int stream, const BlockCopy& copy, cudaMemcpyKind kind, Completion done,
                  int from = -1);
  // Records `operation`'s start event, calls `work` (which queues the operation itself and
  // returns its status), records the end event and pushes the operation to the progress
  // thread. Failures become the operation's error. Precondition: `stream`'s queue lock is held
  // and this device is current.
  template <class Work>
  void queue(int stream, PendingOperation operation, Work&& work);
  // The cost of the copies `copy` queues (of the bytes given, on the given stream of this
  // device), timed on this device's stream into it: a large copy gives the bandwidth, a tiny
  // one the fixed cost. Nothing when a call failed.
  std::optional<LinkCost> measure_link(
      const std::function<cudaError_t(std::size_t bytes, cudaStream_t stream)>& copy);
  // The link from `peer`, if link_peer set one.
  const LinkCost* peer_link(const Device& peer) const;
  // The streams of copies into and out of the device, after the kernel streams.
  int copy_in_stream() const { return kernel_streams_ + priority_streams_; }
  int copy_out_stream() const { return copy_in_stream() + 1; }

  const int ordinal_;
  const std::string label_;  // "cuda:0", for messages
  const std::string name_;   // "cuda:0 (NVIDIA H100 80GB HBM3)"
  const std::string uuid_;   // the GPU's, keys its links in LinkCosts
  const int kernel_streams_;
  const int priority_streams_;  // 0 or kernel_streams_
  std::size_t memory_capacity_ = 0;
  LinkCost host_link_{16e9, 10e-6};  // what a PCIe 4.0 x16 link delivers in practice
  // Set by link_peer before any operation, read only after.
  struct PeerLink {
    const CudaDevice* from;
    LinkCost cost;
  };
  std::vector<PeerLink> peers_;

  // Declared in the order of need, so destroyed in reverse: the progress thread drains first
  // (while the streams it waits on and the pool its events return to still exist), then the
  // streams, then the SMs' partition their kernel streams were created in, then the events,
  // then the memory pool.
  DeviceMemoryPool memory_pool_;
  EventPool events_;
  std::unique_ptr<SmPartition> partition_;
  std::vector<std::unique_ptr<Stream>> streams_;
  // Reduction merges run here, apart from the kernel streams so that waiting for one does not
  // wait for queued tasks. Created at the first merge; used by the device worker only.
  std::unique_ptr<StreamContext> merge_context_;
  CompletionPoller poller_;
};

// The GPUs `config` asks for (Config::gpus, or Config::cuda_devices when not empty), each
// capped at Config::device_memory_limit, with their links calibrated (LinkCosts at
// Config::link_cost_file) and peer copies set up between them. `note` receives what the
// start-up summary says about GPUs ("1 GPU: ...", "no GPU found").
std::vector<std::unique_ptr<Device>> open_cuda_devices(const Config& config, std::string& note);

}  // namespace versa::detail
