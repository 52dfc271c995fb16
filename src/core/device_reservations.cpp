// DataMover (core/data_mover.hpp): device memory. A device worker reserves buffers for all of a
// task's accesses at once, pinning the replicas first; room is made by evicting the least
// recently used replica that nobody uses, or by writing it home when it is the only valid copy
// (docs/architecture.md, "Device memory"). Reduction partials get buffers of their own here.
#include <condition_variable>
#include <thread>

#include "base/mutex.hpp"
#include "base/names.hpp"
#include "base/task.hpp"
#include "core/data_mover.hpp"

namespace versa::detail {

void DataMover::pin_replicas(Task& task, int node) {
  NodeMemory& memory = *nodes_[node].memory;
  for (std::uint32_t i = 0; i < task.access_count; ++i) {
    ReplicaSet* replicas = task.accesses[i].handle->replicas();
    if (!replicas || task.progress(i).add_role == AddRole::renamed) continue;
    MutexLock guard(replicas->mutex());
    Replica& replica = replicas->at(node);
    ++replica.pins;
    MutexLock memory_guard(memory.mutex());
    memory.touch(&replica);
  }
}

// A buffer of `bytes` for `handle`, evicting as needed; null when there is no room: then the
// task's reservation is undone, and `result` says whether to retry later or give up (`why`).
void* DataMover::obtain_buffer(Task& task, int node, std::size_t bytes, const HandleState& handle,
                               bool& writebacks, Reservation& result, std::string& why) {
  NodeMemory& memory = *nodes_[node].memory;
  for (;;) {
    void* buffer;
    bool refused;
    std::uint64_t gives;
    {
      MutexLock memory_guard(memory.mutex());
      buffer = memory.take(bytes, refused);
      gives = memory.gives();
    }
    if (buffer) return buffer;
    const std::uint64_t copies_ended =
        counters_[node].copies_out_ended.load(std::memory_order_acquire);
    const Eviction eviction = evict_one(node);
    if (eviction == Eviction::writing_back) writebacks = true;
    if (eviction == Eviction::busy) std::this_thread::yield();  // a candidate's lock was taken
    if (eviction != Eviction::nothing) continue;
    {
      // Other threads free buffers too (a retired instance's, a merged partial's): one freed
      // after the take is no longer a candidate for eviction, but it is room.
      MutexLock memory_guard(memory.mutex());
      if (memory.gives() != gives) continue;
    }
    // A copy out of this memory pins its source: one still in flight will unpin it, and tell
    // this device's worker, which retries; one that ended while evict_one looked (a peer copy
    // ends on the other device's worker) may have unpinned a replica it skipped.
    const bool copying_out =
        counters_[node].copies_out_in_flight.load(std::memory_order_acquire) > 0;
    if (!copying_out &&
        counters_[node].copies_out_ended.load(std::memory_order_acquire) != copies_ended)
      continue;
    unreserve(task, node);
    release_partials(task, node);
    if (writebacks || copying_out) {
      result = Reservation::retry_later;
      return nullptr;
    }
    why = refused
              ? "allocating " + format_bytes(bytes) + " for " + quoted_handle(handle.name()) +
                    " on " + nodes_[node].device->name() + " failed"
              : "no room on " + nodes_[node].device->name() + " for " + format_bytes(bytes) +
                    " of " + quoted_handle(handle.name()) + ": the rest of its memory is in use";
    result = Reservation::impossible;
    return nullptr;
  }
}

DataMover::Reservation DataMover::reserve(Task& task, int node, std::string& why) {
  NodeMemory& memory = *nodes_[node].memory;
  std::size_t total = 0;
  for (std::uint32_t i = 0; i < task.access_count; ++i)
    if (task.accesses[i].handle->replicas()) total += task.accesses[i].handle->layout()->bytes();
  if (total > memory.capacity()) {
    why = "its data (" + format_bytes(total) + ") is larger than the memory of " +
          nodes_[node].device->name() + " (" + format_bytes(memory.capacity()) + ")";
    return Reservation::impossible;
  }
  // Pin first, so that making room for one buffer cannot evict another of the same task.
  pin_replicas(task, node);
  bool writebacks = false;
  Reservation result = Reservation::ready;
  auto obtain = [&](std::size_t bytes, const HandleState& handle) {
    return obtain_buffer(task, node, bytes, handle, writebacks, result, why);
  };
  for (std::uint32_t i = 0; i < task.access_count; ++i) {
    AccessRecord& access = task.accesses[i];
    HandleState& handle = *access.handle;
    ReplicaSet* replicas = handle.replicas();
    if (!replicas) continue;
    const std::size_t bytes = handle.layout()->bytes();
    if (task.progress(i).add_role == AddRole::renamed) {
      // A partial buffer of its own instead of the replica: filled with the identity when the
      // task starts on the device, merged into the node's slot when it ends.
      if (access.data) continue;
      void* buffer = obtain(bytes, handle);
      if (!buffer) return result;
      access.data = buffer;
      access.layout = handle.packed_layout();
      counters_[node].partial_bytes.fetch_add(bytes, std::memory_order_relaxed);
      continue;
    }
    {
      MutexLock guard(replicas->mutex());
      if (replicas->at(node).data) continue;
    }
    void* buffer = obtain(bytes, handle);
    if (!buffer) return result;
    MutexLock guard(replicas->mutex());
    Replica& replica = replicas->at(node);
    replica.data = buffer;
    MutexLock memory_guard(memory.mutex());
    memory.make_resident(&replica);
  }
  if (writebacks) {
    unreserve(task, node);
    release_partials(task, node);
    return Reservation::retry_later;
  }
  return Reservation::ready;
}

void DataMover::unreserve(Task& task, int node) {
  for (std::uint32_t i = 0; i < task.access_count; ++i) {
    ReplicaSet* replicas = task.accesses[i].handle->replicas();
    if (!replicas || task.progress(i).add_role == AddRole::renamed) continue;
    MutexLock guard(replicas->mutex());
    --replicas->at(node).pins;
  }
}

void DataMover::release_partials(Task& task, int node) {
  for (std::uint32_t i = 0; i < task.access_count; ++i) {
    AccessRecord& access = task.accesses[i];
    if (task.progress(i).add_role != AddRole::renamed || !access.data) continue;
    free_partial(node, access.data, access.handle->layout()->bytes());
    access.data = nullptr;
  }
}

void DataMover::free_partial(int node, void* buffer, std::size_t bytes) {
  NodeMemory& memory = *nodes_[node].memory;
  {
    MutexLock memory_guard(memory.mutex());
    memory.give(buffer, bytes);
  }
  counters_[node].partial_bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

std::string DataMover::copy_partial_home(int node, void* host, const void* partial,
                                         std::size_t bytes) {
  Mutex mutex;
  std::condition_variable landed;
  bool done = false;
  OperationResult outcome;
  BlockCopy copy;
  copy.destination = host;
  copy.destination_pitch = bytes;
  copy.source = partial;
  copy.source_pitch = bytes;
  copy.width = bytes;
  copy.columns = 1;
  // The completion comes from the device's own threads, not its worker: waiting here is safe
  // from any thread.
  nodes_[node].device->copy_to_host(copy, [&](OperationResult result) {
    if (trace_.enabled() && result.error.empty())
      trace_.record_device(node, TraceRecorder::DeviceTrack::copies_to_host, "partial to host",
                           result.seconds, bytes, "(reduction partial)");
    MutexLock guard(mutex);
    outcome = std::move(result);
    done = true;
    landed.notify_all();
  });
  MutexLock lock(mutex);
  landed.wait(lock.native(), [&] { return done; });
  if (!outcome.error.empty())
    return "copy of a reduction partial (" + format_bytes(bytes) + ") from " +
           nodes_[node].device->name() + " failed: " + outcome.error;
  counters_[node].bytes_to_host.fetch_add(bytes, std::memory_order_relaxed);
  counters_[node].transfer_seconds.fetch_add(outcome.seconds, std::memory_order_relaxed);
  return {};
}

// Frees the least recently used replica that nobody uses, or starts writing it home when it is
// the only valid copy. `busy` when the only candidates had their mutex taken at that moment (it
// is only try-locked, against the lock order).
DataMover::Eviction DataMover::evict_one(int node) {
  NodeMemory& memory = *nodes_[node].memory;
  MutexLock memory_guard(memory.mutex());
  bool busy = false;
  // Two walks from the oldest end: the first takes only replicas that no registered access is
  // waiting for, among the 64 least recently used (a bounded cost, however many replicas the
  // device holds), the second any.
  constexpr int unneeded_window = 64;
  for (const bool only_unneeded : {true, false}) {
    int looked = 0;
    for (Replica* candidate = memory.oldest(); candidate; candidate = candidate->lru_next) {
      if (only_unneeded && ++looked > unneeded_window) break;
      ReplicaSet& replicas = *candidate->handle->replicas();
      if (!replicas.mutex().try_lock()) {
        busy = true;
        continue;
      }
      MutexLock lock(replicas.mutex(), std::adopt_lock);
      if (candidate->pins != 0 || candidate->filling) continue;
      if (only_unneeded && candidate->handle->accesses_pending()) continue;
      bool another_copy = false;
      for (int n = 0; n < replicas.nodes(); ++n)
        another_copy |= n != node && is_valid(replicas.at(n).state) && !replicas.at(n).filling;
      // Data nobody can read again (a destroyed scratch handle whose tasks have run) is
      // dropped, not written home, even where this is its only copy.
      const bool dead = !another_copy && is_valid(candidate->state) && candidate->handle->dead();
      if (candidate->state == ReplicaState::invalid || another_copy || dead) {
        if (dead)
          replicas.keep_home_only();
        else if (is_valid(candidate->state))
          replicas.apply_one(node, CoherenceEvent::evict);
        memory.make_absent(candidate);
        memory.give(candidate->data, candidate->handle->layout()->bytes());
        candidate->data = nullptr;
        counters_[node].evictions.fetch_add(1, std::memory_order_relaxed);
        if (trace_.enabled())
          trace_.record_device(node, TraceRecorder::DeviceTrack::evictions, "evict", 0,
                               candidate->handle->layout()->bytes(),
                               TraceRecorder::handle_label(candidate->handle->name()));
        return Eviction::freed;
      }
      Replica& host = replicas.at(0);
      if (host.filling) {  // landing from another device; evictable once it has
        busy = true;
        continue;
      }
      start_fill(replicas, host, *candidate, nullptr);
      return Eviction::writing_back;
    }
  }
  return busy ? Eviction::busy : Eviction::nothing;
}

}  // namespace versa::detail
