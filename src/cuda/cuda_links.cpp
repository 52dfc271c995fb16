// CudaDevice (cuda/cuda_device.hpp): its links. The cost of the host link and of each peer link
// is measured once per machine (a large copy for the bandwidth, a tiny one for the latency) and
// kept in the link-cost file (device/link_costs.hpp, keyed by GPU UUIDs); peer access is enabled
// once per pair of GPUs.
#include <algorithm>
#include <utility>

#include "cuda/cuda_check.hpp"
#include "cuda/cuda_device.hpp"
#include "cuda/current_device.hpp"

namespace versa::detail {

namespace {

constexpr std::size_t mebibyte = std::size_t{1} << 20;
// Large enough that the fixed cost of a copy is negligible, small enough to take a few
// milliseconds at start-up.
constexpr std::size_t bandwidth_probe_bytes = 64 * mebibyte;
// Small enough that its transfer time is negligible: its copy takes the link's fixed cost.
constexpr std::size_t latency_probe_bytes = 8;

struct PinnedRelease {
  void operator()(void* buffer) const { (void)cudaFreeHost(buffer); }
};
struct DeviceRelease {
  void operator()(void* buffer) const { (void)cudaFree(buffer); }
};

}  // namespace

std::optional<LinkCost> CudaDevice::measure_link(
    const std::function<cudaError_t(std::size_t bytes, cudaStream_t stream)>& copy) {
  PooledEvent start;
  PooledEvent end;
  cudaStream_t stream = streams_[static_cast<std::size_t>(copy_in_stream())]->context.stream();
  // Each copy twice, the second timed: the first pays for lazy initialisation (DMA mappings,
  // the copy engines' first use, peer mappings).
  auto seconds = [&](std::size_t bytes) -> std::optional<double> {
    float milliseconds = 0;
    const bool timed =
        copy(bytes, stream) == cudaSuccess && cudaEventRecord(start.get(), stream) == cudaSuccess &&
        copy(bytes, stream) == cudaSuccess && cudaEventRecord(end.get(), stream) == cudaSuccess &&
        cudaEventSynchronize(end.get()) == cudaSuccess &&
        cudaEventElapsedTime(&milliseconds, start.get(), end.get()) == cudaSuccess;
    if (!timed) return std::nullopt;
    return std::max(static_cast<double>(milliseconds) * 1e-3, 1e-7);
  };
  std::optional<double> large;
  std::optional<double> tiny;
  if (events_.acquire(start) == cudaSuccess && events_.acquire(end) == cudaSuccess) {
    large = seconds(bandwidth_probe_bytes);
    if (large) tiny = seconds(latency_probe_bytes);
  }
  if (!large || !tiny) {
    // Whatever was queued must be finished before the caller frees the buffers.
    (void)cudaStreamSynchronize(stream);
    (void)cudaGetLastError();
    return std::nullopt;
  }
  return LinkCost{static_cast<double>(bandwidth_probe_bytes) / *large, *tiny};
}

void CudaDevice::calibrate_host_link(LinkCosts& costs) {
  const std::string key = "host-to:" + uuid_;
  if (const std::optional<LinkCost> known = costs.find(key)) {
    host_link_ = *known;
    return;
  }
  CurrentDeviceGuard guard(ordinal_);
  void* host = nullptr;
  void* device = nullptr;
  if (cudaMallocHost(&host, bandwidth_probe_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return;  // the typical figures stay
  }
  std::unique_ptr<void, PinnedRelease> host_buffer(host);
  if (cudaMalloc(&device, bandwidth_probe_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  std::unique_ptr<void, DeviceRelease> device_buffer(device);
  const std::optional<LinkCost> measured =
      measure_link([&](std::size_t bytes, cudaStream_t stream) {
        return cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream);
      });
  if (!measured) return;
  host_link_ = *measured;
  costs.put(key, host_link_);
}

void CudaDevice::link_peer(CudaDevice& from, LinkCosts& costs) {
  bool direct = from.ordinal_ == ordinal_;
  if (!direct) {
    int can_access = 0;
    if (cudaDeviceCanAccessPeer(&can_access, ordinal_, from.ordinal_) == cudaSuccess &&
        can_access != 0) {
      CurrentDeviceGuard guard(ordinal_);
      const cudaError_t status = cudaDeviceEnablePeerAccess(from.ordinal_, 0);
      // Enabled already by another entry of this GPU, or by the program itself. Pool memory
      // ignores peer access: the pool grants it apart.
      direct = (status == cudaSuccess || status == cudaErrorPeerAccessAlreadyEnabled) &&
               from.memory_pool_.share_with(ordinal_);
    }
    (void)cudaGetLastError();
  }
  // Staged through the host, a copy crosses both GPUs' host links one after the other.
  LinkCost cost{std::min(host_link_.bandwidth, from.host_link_.bandwidth),
                host_link_.latency + from.host_link_.latency};
  const std::string key =
      "peer:" + from.uuid_ + ":" + uuid_ + (direct ? ":direct" : ":through-host");
  if (const std::optional<LinkCost> known = costs.find(key)) {
    cost = *known;
  } else {
    void* source = nullptr;
    void* target = nullptr;
    {
      CurrentDeviceGuard guard(from.ordinal_);
      if (cudaMalloc(&source, bandwidth_probe_bytes) != cudaSuccess) source = nullptr;
    }
    CurrentDeviceGuard guard(ordinal_);
    if (source && cudaMalloc(&target, bandwidth_probe_bytes) != cudaSuccess) target = nullptr;
    (void)cudaGetLastError();
    if (source && target) {
      const std::optional<LinkCost> measured =
          measure_link([&](std::size_t bytes, cudaStream_t stream) {
            return cudaMemcpyPeerAsync(target, ordinal_, source, from.ordinal_, bytes, stream);
          });
      if (measured) {
        cost = *measured;
        costs.put(key, cost);
      }
    }
    if (target) (void)cudaFree(target);
    if (source) {
      CurrentDeviceGuard source_guard(from.ordinal_);
      (void)cudaFree(source);
    }
    (void)cudaGetLastError();
  }
  peers_.push_back({&from, cost});
}

const LinkCost* CudaDevice::peer_link(const Device& peer) const {
  for (const PeerLink& link : peers_)
    if (link.from == &peer) return &link.cost;
  return nullptr;
}

bool CudaDevice::has_peer_link(const Device& peer) const { return peer_link(peer) != nullptr; }

double CudaDevice::peer_bandwidth(const Device& peer) const {
  const LinkCost* link = peer_link(peer);
  return link ? link->bandwidth : 0;
}

double CudaDevice::peer_latency(const Device& peer) const {
  const LinkCost* link = peer_link(peer);
  return link ? link->latency : 0;
}

}  // namespace versa::detail
