// Moves handles' data between memory nodes so that tasks find valid replicas where they run
// (DESIGN section 4): acquiring a replica for an access, issuing the copies, reserving device
// buffers with least-recently-used eviction, and writing data home.
//
// Every change of a replica's state goes through ReplicaSet::apply (the coherence table) under
// the handle's replica mutex. Copies are asynchronous: the replica being filled is marked
// `filling`, its source is pinned, and the tasks that need it are resumed (FillListener) from
// the device worker of the device that made the copy. Lock order: a handle's replica mutex, then
// a node's memory mutex; eviction, which walks a node's LRU list under the memory mutex, only
// try-locks replica mutexes.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "core/peer_links.hpp"
#include "core/trace.hpp"
#include "data/handle_state.hpp"
#include "data/node_memory.hpp"
#include "device/device.hpp"

namespace versa::detail {

class DeviceWorker;
class Task;

// Bytes moved and evictions on one device node.
struct TransferCounters {
  std::atomic<std::uint64_t> bytes_to_device{0};
  std::atomic<std::uint64_t> bytes_to_host{0};
  std::atomic<std::uint64_t> bytes_from_peers{0};  // into this device over peer links
  std::atomic<std::uint64_t> bytes_zeroed{0};      // replicas filled with zeros, not copied
  std::atomic<std::uint64_t> evictions{0};
  std::atomic<double> transfer_seconds{0};
  // Copies out of the node's replicas still in flight: they pin their source, so memory they
  // hold will become evictable.
  std::atomic<int> copies_out_in_flight{0};
  // Copies out of the node's replicas that have ended, counted before copies_out_in_flight
  // goes down: a reservation that found only pinned replicas tells by it whether one was
  // unpinned while it looked.
  std::atomic<std::uint64_t> copies_out_ended{0};
  // Bytes of reduction partials held on the node.
  std::atomic<std::uint64_t> partial_bytes{0};
};

class DataMover {
 public:
  struct Node {
    Device* device = nullptr;        // null for the host
    NodeMemory* memory = nullptr;    // null for the host
    DeviceWorker* worker = nullptr;  // receives the completions of the device's copies
  };

  // Copies and evictions are recorded in `trace` when it is enabled.
  DataMover(std::vector<Node> nodes, FillListener& tasks, TraceRecorder& trace);

  int nodes() const { return static_cast<int>(nodes_.size()); }
  // Sets the worker that receives the completions of node `node`'s copies (before any copy).
  void attach_worker(int node, DeviceWorker* worker) { nodes_[node].worker = worker; }
  const TransferCounters& counters(int node) const { return counters_[node]; }

  enum class Reservation { ready, retry_later, impossible };
  // Pins a buffer on device node `node` for every data access of `task` (allocating and
  // evicting as needed; a renamed add access gets a partial buffer of its own, left in its
  // `data`), all at once so that two tasks cannot evict each other's inputs forever.
  // retry_later: buffers are being written back to make room, or pinned by tasks in flight; the
  // task holds nothing and should try again after the next completion on this device.
  // impossible: `why` says what (larger than the device, or the device refused to allocate).
  // Called only on the node's device worker.
  Reservation reserve(Task& task, int node, std::string& why);
  // Unpins what reserve() pinned (after the task ran, or when it is sent elsewhere).
  void unreserve(Task& task, int node);
  // Frees the partial buffers reserve() gave `task`'s renamed add accesses (when it does not
  // run there after all).
  void release_partials(Task& task, int node);

  // Whether the reduction partials held on device node `node` are within their share of its
  // memory (an eighth): partials cannot be evicted, replicas must keep room.
  bool may_keep_partial(int node) const {
    return counters_[node].partial_bytes.load(std::memory_order_relaxed) <=
           nodes_[node].memory->capacity() / 8;
  }
  // Returns a reduction partial's buffer to device node `node`'s memory.
  void free_partial(int node, void* buffer, std::size_t bytes);
  // Copies a dense partial of `bytes` from device node `node` into `host` and waits. Returns ""
  // or what went wrong. Any thread.
  std::string copy_partial_home(int node, void* host, const void* partial, std::size_t bytes);

  // Acquires `task`'s accesses on `node` in the coherence protocol: returns how many copies
  // (its own, or others' it must wait for) are still to land; 0 means every access is valid
  // there and its data and layout point at that node's replica. The task's FillListener
  // context is resumed once per pending copy; call stage again when all have landed. Device
  // nodes need reserve() first.
  std::uint32_t stage(Task& task, int node);
  // Whether `task` would find the data of every access on `node` without a copy to make or wait
  // for: a hint for ordering (the answer may change before the task is staged). Takes each
  // replica lock once; any thread that holds none.
  static bool resident(const Task& task, int node);

  // Copies every device-owned replica home, but those of handles that do not write back, and
  // waits for those copies and for write-backs of evictions still landing (wait_all: results
  // are readable in the user's memory). Keeps the device copies, as shared.
  void write_back_all();
  // For a handle being destroyed with no access pending: waits for its copies in flight, brings
  // its data home if needed (and it writes back) and frees its device buffers, also when the
  // copy home failed (the CopyFailure is thrown after).
  void retire(HandleState& handle);
  // Destroys `instance`, a renamed instance no access will use again (its data is dead), and
  // frees its device buffers. Never waits, so that any thread may call it, a device's worker
  // included: an instance with a copy still in flight (an eviction's write-back), or dropped
  // while write_back_all walks the resident handles, stays listed until a later call or
  // write_back_all destroys it.
  void drop_instance(HandleState* instance);
  // The device that holds a valid copy of `handle`, for messages ("" when none does).
  std::string holder_name(HandleState& handle);
  // At shutdown: write_back_all, then frees every device buffer.
  void release_all();

 private:
  enum class Acquired { ready, waiting };
  Acquired acquire(Task& task, std::uint32_t index, int node);
  // Starts a copy into `target` from `source` (both of `replicas`) and registers `waiter`, if
  // any, on the target.
  void start_fill(ReplicaSet& replicas, Replica& target, Replica& source, const FillWaiter* waiter)
      VERSA_REQUIRES(replicas.mutex());
  // `zeros`: the fill was a zero fill, not a copy (ReplicaSet::host_zero).
  void fill_done(ReplicaSet& replicas, int target, int source, bool zeros,
                 const OperationResult& result);
  void pin_replicas(Task& task, int node);
  void* obtain_buffer(Task& task, int node, std::size_t bytes, const HandleState& handle,
                      bool& writebacks, Reservation& result, std::string& why);
  enum class Eviction { freed, writing_back, busy, nothing };
  Eviction evict_one(int node);
  void free_buffer(Replica& replica);
  BlockCopy block_copy(const HandleState& handle, const Replica& to, const Replica& from) const;
  // Brings `handles` home and waits; a failed copy throws CopyFailure for `operation`. Those
  // that do not write back (HandleState::writes_back) only have copies home already under way
  // waited for.
  void write_back(std::vector<HandleState*>& handles, const char* operation);
  void write_back_resident() VERSA_REQUIRES(walk_mutex_);
  // Waits for the copies of `replicas` in flight (an eviction's write-backs); holds no lock.
  static void wait_for_copies(ReplicaSet& replicas);
  // The handles with a buffer on `node`.
  std::vector<HandleState*> resident_handles(int node);
  // Destroys the dropped instances with no copy in flight.
  void destroy_dropped() VERSA_REQUIRES(walk_mutex_);

  std::vector<Node> nodes_;
  const PeerLinks links_;
  FillListener& tasks_;
  TraceRecorder& trace_;
  std::vector<TransferCounters> counters_;
  // Held while resident handles are walked (their list is a snapshot): dropped instances are
  // destroyed only under it.
  Mutex walk_mutex_;
  Mutex dropped_mutex_;
  std::vector<HandleState*> dropped_ VERSA_GUARDED_BY(dropped_mutex_);
};

}  // namespace versa::detail
