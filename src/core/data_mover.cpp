#include "core/data_mover.hpp"

#include <chrono>
#include <condition_variable>
#include <thread>

#include "base/assert.hpp"
#include "base/mutex.hpp"
#include "base/names.hpp"
#include "base/task.hpp"
#include "core/device_worker.hpp"
#include "device/body_lane.hpp"
#include "versa/error.hpp"

namespace versa::detail {

namespace {

// Counts copies still to land and lets one thread wait for them (write-backs).
class CopyLatch final : public FillListener {
 public:
  void expect() {
    MutexLock guard(mutex_);
    ++pending_;
  }
  // `context`: the waiter's, kept with the first error (write_back gives the handle).
  void fill_landed(void* context, const std::string& error) override {
    MutexLock guard(mutex_);
    if (!error.empty() && error_.empty()) {
      error_ = error;
      failed_ = context;
    }
    if (--pending_ == 0) landed_.notify_all();
  }
  // Returns the first error, or "", and the context of the copy that made it. On a device's
  // thread (a handle destroyed inside a task's body there), the thread's lane runs meanwhile:
  // it may be the worker that receives the copies' completions.
  std::string wait(void** failed = nullptr) {
    MutexLock lock(mutex_);
    const auto landed = [this]() VERSA_REQUIRES(mutex_) { return pending_ == 0; };
    if (BodyLane* lane = current_body_lane(); lane && !landed()) {
      lock.unlock();
      lane->pause();
      for (;;) {
        lock.lock();
        if (landed()) break;
        lock.unlock();
        lane->help(std::chrono::microseconds(100));
      }
      lock.unlock();
      lane->resume();
      lock.lock();
    }
    landed_.wait(lock.native(), landed);
    if (failed) *failed = failed_;
    return error_;
  }

 private:
  Mutex mutex_;
  std::condition_variable landed_;
  int pending_ VERSA_GUARDED_BY(mutex_) = 0;
  std::string error_ VERSA_GUARDED_BY(mutex_);
  void* failed_ VERSA_GUARDED_BY(mutex_) = nullptr;
};

}  // namespace

DataMover::DataMover(std::vector<Node> nodes, FillListener& tasks, TraceRecorder& trace)
    : nodes_(std::move(nodes)),
      links_(nodes_),
      tasks_(tasks),
      trace_(trace),
      counters_(nodes_.size()) {}

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
  // Recorded where it completes, on the device's thread: the end is the copy's own.
  Completion done = [this, &replicas, worker, handle = target.handle, to = target.node,
                     from = source.node](OperationResult result) {
    if (trace_.enabled() && result.error.empty())
      trace_.record_device(to != 0 ? to : from,
                           to != 0 ? TraceRecorder::DeviceTrack::copies_to_device
                                   : TraceRecorder::DeviceTrack::copies_to_host,
                           to == 0     ? "to host"
                           : from == 0 ? "to device"
                                       : "from peer",
                           result.seconds, handle->layout()->bytes(),
                           TraceRecorder::handle_label(handle->name()));
    worker->post([this, &replicas, to, from, result = std::move(result)] {
      fill_done(replicas, to, from, result);
    });
  };
  if (target.node == 0) {
    device.copy_to_host(copy, std::move(done));
  } else if (source.node == 0) {
    device.copy_to_device(copy, std::move(done));
  } else {
    device.copy_from_peer(*nodes_[source.node].device, copy, std::move(done));
  }
}

void DataMover::fill_done(ReplicaSet& replicas, int target, int source,
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
      auto& counter = target == 0   ? counters_[device_node].bytes_to_host
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
  for (const FillWaiter& w : waiters) w.listener->fill_landed(w.context, error);
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
  auto wait_for = [&](Replica& filling) {
    task.pending_fills().fetch_add(1, std::memory_order_relaxed);  // before the waiter can fire
    filling.fill_waiters.push_back(waiter);
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
  access.data = local.data;
  access.layout = node == 0 ? handle.layout() : handle.packed_layout();
  return Acquired::ready;
}

std::uint32_t DataMover::stage(Task& task, int node) {
  std::uint32_t waiting = 0;
  for (std::uint32_t i = 0; i < task.access_count; ++i) {
    if (task.accesses[i].data) continue;  // acquired in an earlier pass
    if (acquire(task, i, node) == Acquired::waiting) ++waiting;
  }
  return waiting;
}

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
  for (Replica* candidate = memory.oldest(); candidate; candidate = candidate->lru_next) {
    ReplicaSet& replicas = *candidate->handle->replicas();
    if (!replicas.mutex().try_lock()) {
      busy = true;
      continue;
    }
    MutexLock lock(replicas.mutex(), std::adopt_lock);
    if (candidate->pins != 0 || candidate->filling) continue;
    bool another_copy = false;
    for (int n = 0; n < replicas.nodes(); ++n)
      another_copy |= n != node && is_valid(replicas.at(n).state) && !replicas.at(n).filling;
    if (candidate->state == ReplicaState::invalid || another_copy) {
      if (is_valid(candidate->state)) replicas.apply_one(node, CoherenceEvent::evict);
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
  return busy ? Eviction::busy : Eviction::nothing;
}

std::vector<HandleState*> DataMover::resident_handles(int node) {
  std::vector<HandleState*> handles;
  NodeMemory& memory = *nodes_[node].memory;
  MutexLock memory_guard(memory.mutex());
  for (Replica* r = memory.oldest(); r; r = r->lru_next) handles.push_back(r->handle);
  return handles;
}

void DataMover::write_back(std::vector<HandleState*>& handles, const char* operation) {
  CopyLatch latch;
  for (HandleState* handle : handles) {
    const FillWaiter waiter{&latch, handle};
    ReplicaSet& replicas = *handle->replicas();
    MutexLock guard(replicas.mutex());
    Replica& host = replicas.at(0);
    if (host.filling) {
      latch.expect();
      host.fill_waiters.push_back(waiter);
    } else if (!is_valid(host.state)) {
      latch.expect();
      start_fill(replicas, host, *replicas.source_for(0), &waiter);
    }
  }
  void* failed = nullptr;
  const std::string error = latch.wait(&failed);
  if (error.empty()) return;
  auto& handle = *static_cast<HandleState*>(failed);
  throw CopyFailure(operation, handle.name(), holder_name(handle), error);
}

std::string DataMover::holder_name(HandleState& handle) {
  ReplicaSet& replicas = *handle.replicas();
  MutexLock guard(replicas.mutex());
  for (int node = 1; node < replicas.nodes(); ++node)
    if (is_valid(replicas.at(node).state)) return nodes_[node].device->name();
  return {};
}

// Every resident handle, not only those owned on the device: an eviction's write-back may still
// be landing in the host copy of a handle whose device copy it left shared, and the user's
// memory must not change after wait_all returns.
void DataMover::write_back_resident() {
  destroy_dropped();  // no need to bring dead data home
  for (int node = 1; node < nodes(); ++node) {
    std::vector<HandleState*> handles = resident_handles(node);
    write_back(handles, "wait_all");
  }
  destroy_dropped();  // those whose copies were in flight
}

void DataMover::write_back_all() {
  MutexLock walk(walk_mutex_);
  write_back_resident();
}

void DataMover::free_buffer(Replica& replica) {
  NodeMemory& memory = *nodes_[replica.node].memory;
  MutexLock memory_guard(memory.mutex());
  memory.make_absent(&replica);
  memory.give(replica.data, replica.handle->layout()->bytes());
  replica.data = nullptr;
}

void DataMover::retire(HandleState& handle) {
  ReplicaSet& replicas = *handle.replicas();
  // Write-backs started by eviction may still be landing: wait for them like a task would.
  CopyLatch landed;
  {
    MutexLock guard(replicas.mutex());
    for (int node = 0; node < replicas.nodes(); ++node) {
      Replica& replica = replicas.at(node);
      if (!replica.filling) continue;
      landed.expect();
      replica.fill_waiters.push_back({&landed, nullptr});
    }
  }
  landed.wait();
  std::vector<HandleState*> one{&handle};
  write_back(one, "destroying a handle");
  MutexLock guard(replicas.mutex());
  for (int node = 1; node < replicas.nodes(); ++node) {
    Replica& replica = replicas.at(node);
    if (!replica.data) continue;
    if (is_valid(replica.state)) replicas.apply_one(node, CoherenceEvent::evict);
    free_buffer(replica);
  }
}

void DataMover::drop_instance(HandleState* instance) {
  {
    MutexLock guard(dropped_mutex_);
    dropped_.push_back(instance);
  }
  if (!walk_mutex_.try_lock()) return;
  MutexLock walk(walk_mutex_, std::adopt_lock);
  destroy_dropped();
}

void DataMover::destroy_dropped() {
  std::vector<HandleState*> dropped;
  {
    MutexLock guard(dropped_mutex_);
    dropped.swap(dropped_);
  }
  std::vector<HandleState*> kept;
  for (HandleState* instance : dropped) {
    ReplicaSet& replicas = *instance->replicas();
    {
      MutexLock guard(replicas.mutex());
      // The copy's completion refers to the replicas.
      if (replicas.filling()) {
        kept.push_back(instance);
        continue;
      }
      for (int node = 1; node < replicas.nodes(); ++node)
        if (replicas.at(node).data) free_buffer(replicas.at(node));
    }
    delete instance;
  }
  if (kept.empty()) return;
  MutexLock guard(dropped_mutex_);
  dropped_.insert(dropped_.end(), kept.begin(), kept.end());
}

void DataMover::release_all() {
  MutexLock walk(walk_mutex_);
  write_back_resident();
  for (int node = 1; node < nodes(); ++node)
    for (HandleState* handle : resident_handles(node)) retire(*handle);
}

}  // namespace versa::detail
