// DataMover (core/data_mover.hpp): acquiring a task's accesses on a memory node in the
// coherence protocol, and the copies that fill replicas (host to device, device to host, device
// to device over a peer link). Reserving and evicting device buffers is in
// device_reservations.cpp; writing data home, retiring handles and dropped instances in
// write_backs.cpp.
#include "core/data_mover.hpp"

#include <algorithm>

#include "base/assert.hpp"
#include "base/mutex.hpp"
#include "base/names.hpp"
#include "base/task.hpp"
#include "core/device_worker.hpp"

namespace versa::detail {

DataMover::DataMover(std::vector<Node> nodes, FillListener& tasks, TraceRecorder& trace)
    : nodes_(std::move(nodes)),
      links_(nodes_),
      tasks_(tasks),
      trace_(trace),
      counters_(nodes_.size()) {}

namespace {

// Whether the handle's host data is all zero bytes (checked where asserts are on).
[[maybe_unused]] bool is_zero(const HandleState& handle) {
  const Layout& layout = *handle.layout();
  const auto* data = static_cast<const std::byte*>(handle.data());
  for (std::size_t column = 0; column < layout.cols; ++column) {
    const std::byte* first = data + column * layout.ld * layout.element_size;
    if (std::any_of(first, first + layout.rows * layout.element_size,
                    [](std::byte b) { return b != std::byte{0}; }))
      return false;
  }
  return true;
}

}  // namespace

BlockCopy DataMover::block_copy(const HandleState& handle, const Replica& to,
                                const Replica& from) const {
  const Layout& host = *handle.layout();
  const std::size_t host_pitch = host.ld * host.element_size;
  const std::size_t packed_pitch = host.rows * host.element_size;
  BlockCopy copy;
  copy.destination = to.data;
  copy.destination_pitch = to.node == 0 ? host_pitch : packed_pitch;
  copy.source = from.data;
  copy.source_pitch = from.node == 0 ? host_pitch : packed_pitch;
  copy.width = packed_pitch;
  copy.columns = host.cols;
  return copy;
}

void DataMover::start_fill(ReplicaSet& replicas, Replica& target, Replica& source,
                           const FillWaiter* waiter) {
  VERSA_ASSERT(target.node == 0 || source.node == 0 ? target.node != source.node
                                                    : links_.linked(target.node, source.node),
               "copies go between host and a device, or between devices with a peer link");
  target.filling = true;
  if (waiter) target.fill_waiters.push_back(*waiter);
  replicas.apply(target.node, CoherenceEvent::read_here, CoherenceEvent::read_elsewhere);
  ++source.pins;
  if (source.node != 0)
    counters_[source.node].copies_out_in_flight.fetch_add(1, std::memory_order_relaxed);
  const int device_node = target.node != 0 ? target.node : source.node;
  Device& device = *nodes_[device_node].device;
  DeviceWorker* worker = nodes_[device_node].worker;
  const BlockCopy copy = block_copy(*target.handle, target, source);
  if (target.node == 0) replicas.forget_host_zero();  // the copy changes the host's
  const bool zeros = source.node == 0 && replicas.host_zero();
  if (!zeros && (source.node == 0 || target.node == 0)) {
    HandleState& handle = *target.handle;
    std::size_t bytes = 0;
    if (std::shared_ptr<HostPins> pins = replicas.take_pending_pin(bytes);
        pins && pins->pin(handle.data(), bytes))
      handle.set_host_pins(std::move(pins));
  }
  VERSA_ASSERT(!zeros || is_zero(*target.handle), "data declared zero changed at home unseen");
  // Recorded where it completes, on the device's thread: the end is the copy's own.
  Completion done = [this, &replicas, worker, handle = target.handle, to = target.node,
                     from = source.node, zeros](OperationResult result) {
    if (trace_.enabled() && result.error.empty())
      trace_.record_device(to != 0 ? to : from,
                           to != 0 ? TraceRecorder::DeviceTrack::copies_to_device
                                   : TraceRecorder::DeviceTrack::copies_to_host,
                           zeros       ? "zero fill"
                           : to == 0   ? "to host"
                           : from == 0 ? "to device"
                                       : "from peer",
                           result.seconds, handle->layout()->bytes(),
                           TraceRecorder::handle_label(handle->name()));
    worker->post([this, &replicas, to, from, zeros, result = std::move(result)] {
      fill_done(replicas, to, from, zeros, result);
    });
  };
  if (zeros) {
    device.fill_zero(copy.destination, copy.bytes(), std::move(done));
  } else if (target.node == 0) {
    device.copy_to_host(copy, std::move(done));
  } else if (source.node == 0) {
    device.copy_to_device(copy, std::move(done));
  } else {
    device.copy_from_peer(*nodes_[source.node].device, copy, std::move(done));
  }
}

void DataMover::fill_done(ReplicaSet& replicas, int target, int source, bool zeros,
                          const OperationResult& result) {
  std::vector<FillWaiter> waiters;
  std::string error;
  {
    MutexLock guard(replicas.mutex());
    Replica& filled = replicas.at(target);
    const HandleState& handle = *filled.handle;
    filled.filling = false;
    waiters.swap(filled.fill_waiters);
    --replicas.at(source).pins;
    if (source != 0) {
      counters_[source].copies_out_ended.fetch_add(1, std::memory_order_release);
      counters_[source].copies_out_in_flight.fetch_sub(1, std::memory_order_release);
    }
    const int device_node = target != 0 ? target : source;
    if (result.error.empty()) {
      auto& counter = zeros         ? counters_[device_node].bytes_zeroed
                      : target == 0 ? counters_[device_node].bytes_to_host
                      : source == 0 ? counters_[device_node].bytes_to_device
                                    : counters_[device_node].bytes_from_peers;
      counter.fetch_add(handle.layout()->bytes(), std::memory_order_relaxed);
      counters_[device_node].transfer_seconds.fetch_add(result.seconds, std::memory_order_relaxed);
    } else {
      // The source still holds the data: the failed copy only loses the target's validity.
      replicas.apply_one(target, CoherenceEvent::evict);
      const std::string size = " (" + format_bytes(handle.layout()->bytes()) + ") ";
      const std::string ends = target == 0   ? "from " + nodes_[source].device->name()
                               : source == 0 ? "to " + nodes_[target].device->name()
                                             : "from " + nodes_[source].device->name() + " to " +
                                                   nodes_[target].device->name();
      error = "copy of " + quoted_handle(handle.name()) + size + ends + " failed: " + result.error;
    }
  }
  for (const FillWaiter& w : waiters)
    w.listener->fill_landed(w.context, w.borrowed ? std::string() : error);
  // A peer copy ends on the target's worker; the source's may hold tasks back until the copies
  // out of its memory have landed (DataMover::obtain_buffer): it hears of it too.
  if (target != 0 && source != 0) nodes_[source].worker->post([] {});
}

DataMover::Acquired DataMover::acquire(Task& task, std::uint32_t index, int node) {
  AccessRecord& access = task.accesses[index];
  HandleState& handle = *access.handle;
  ReplicaSet* replicas = handle.replicas();
  if (!replicas) {  // a token or an empty handle: nothing to move
    access.data = handle.data();
    access.layout = handle.layout();
    return Acquired::ready;
  }
  // A renamed add has its own partial buffer.
  if (task.progress(index).add_role == AddRole::renamed) return Acquired::ready;
  const FillWaiter waiter{&tasks_, &task};
  MutexLock guard(replicas->mutex());
  Replica& local = replicas->at(node);
  // Another's copy: its failure is not this task's (FillWaiter::borrowed).
  auto wait_for = [&](Replica& filling) {
    task.pending_fills().fetch_add(1, std::memory_order_relaxed);  // before the waiter can fire
    filling.fill_waiters.push_back({waiter.listener, waiter.context, true});
    return Acquired::waiting;
  };
  auto fill_from = [&](Replica& target, Replica& source) VERSA_REQUIRES(replicas->mutex()) {
    task.pending_fills().fetch_add(1, std::memory_order_relaxed);
    task.bytes_moved += access.handle->layout()->bytes();
    start_fill(*replicas, target, source, &waiter);
    return Acquired::waiting;
  };
  if (local.filling) return wait_for(local);
  // A copy in flight anywhere must land before the data may change.
  if (modifies(access.mode)) {
    if (Replica* filling = replicas->filling()) return wait_for(*filling);
  }
  if (overwrites(access.mode)) {
    replicas->apply(node, CoherenceEvent::overwrite_here, CoherenceEvent::write_elsewhere);
  } else {
    if (!is_valid(local.state)) {
      Replica* source = links_.source_for(*replicas, node);
      if (!source) return wait_for(*replicas->filling());  // every valid copy is still landing
      if (source->node == 0)
        if (Replica* landing = links_.landing_on_peer(*replicas, node)) return wait_for(*landing);
      if (node != 0 && source->node != 0 && !links_.linked(node, source->node)) {
        // Device to device without a peer link goes through the host.
        Replica& host = replicas->at(0);
        return host.filling ? wait_for(host) : fill_from(host, *source);
      }
      return fill_from(local, *source);
    }
    if (modifies(access.mode))
      replicas->apply(node, CoherenceEvent::write_here, CoherenceEvent::write_elsewhere);
  }
  if (node == 0 && modifies(access.mode)) replicas->forget_host_zero();
  access.data = local.data;
  access.layout = node == 0 ? handle.layout() : handle.packed_layout();
  return Acquired::ready;
}

bool DataMover::resident(const Task& task, int node) {
  for (std::uint32_t i = 0; i < task.access_count; ++i) {
    const AccessRecord& access = task.accesses[i];
    ReplicaSet* replicas = access.handle->replicas();
    if (!replicas) continue;
    MutexLock guard(replicas->mutex());
    const Replica& local = replicas->at(node);
    if (local.filling || (modifies(access.mode) && replicas->filling())) return false;
    if (!overwrites(access.mode) && !is_valid(local.state)) return false;
  }
  return true;
}

std::uint32_t DataMover::stage(Task& task, int node) {
  std::uint32_t waiting = 0;
  for (std::uint32_t i = 0; i < task.access_count; ++i) {
    if (task.accesses[i].data) continue;  // acquired in an earlier pass
    if (acquire(task, i, node) == Acquired::waiting) ++waiting;
  }
  return waiting;
}

}  // namespace versa::detail
