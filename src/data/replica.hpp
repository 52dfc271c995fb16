// One handle's copy of its data on one memory node, and the set of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "data/coherence.hpp"
#include "data/host_pins.hpp"

namespace versa::detail {

class HandleState;

// Told when a copy into a replica has landed (error empty) or failed.
class FillListener {
 public:
  virtual void fill_landed(void* context, const std::string& error) = 0;

 protected:
  ~FillListener() = default;
};
struct FillWaiter {
  FillListener* listener;
  void* context;
  // Waits for a copy made for someone else (another task's, an eviction's write-back): if that
  // copy fails, the waiter is told it landed, and tries again, copying for itself if need be.
  // Only a copy a task made for itself fails the task.
  bool borrowed = false;
};

// All fields are guarded by the owning ReplicaSet's mutex, except the links, which belong to
// the node's memory (NodeMemory) and are guarded by its mutex. A member cannot name another
// object's lock in an annotation: the analysis checks instead that ReplicaSet::at, which hands
// a replica out, is called with the set's mutex held.
struct Replica {
  ReplicaState state = ReplicaState::invalid;
  // A copy into `data` is in flight; `fill_waiters` are resumed when it lands. While a replica
  // of a handle is filling, no access may modify the handle (the copy would race with it).
  bool filling = false;
  // Tasks staged on this node with this replica, and copies reading from it. A pinned replica
  // is never evicted.
  std::uint32_t pins = 0;
  void* data = nullptr;  // host: the user's memory; device: null until a buffer is reserved
  std::vector<FillWaiter> fill_waiters;

  // Identity, for eviction (set once).
  HandleState* handle = nullptr;
  int node = 0;
  // Least-recently-used list of the node's resident replicas (NodeMemory).
  Replica* lru_prev = nullptr;
  Replica* lru_next = nullptr;
  bool resident = false;
};

// The replicas of one handle, one per memory node (node 0: host). Exists only in runtimes with
// accelerators. Invariant (checked in debug builds after every change): at least one replica is
// valid.
class ReplicaSet {
 public:
  ReplicaSet(HandleState* handle, void* host_data, int nodes) : nodes_(nodes), replicas_(nodes) {
    for (int n = 0; n < nodes; ++n) {
      replicas_[n].handle = handle;
      replicas_[n].node = n;
    }
    replicas_[0].data = host_data;
    replicas_[0].state = ReplicaState::owned;
  }

  int nodes() const { return nodes_; }
  Replica& at(int node) VERSA_REQUIRES(mutex_) { return replicas_[node]; }
  Mutex& mutex() VERSA_RETURN_CAPABILITY(mutex_) { return mutex_; }

  // Applies `here` to the replica on `node` and `elsewhere` to all others.
  void apply(int node, CoherenceEvent here, CoherenceEvent elsewhere) VERSA_REQUIRES(mutex_) {
    for (int n = 0; n < nodes(); ++n)
      replicas_[n].state = transition(replicas_[n].state, n == node ? here : elsewhere);
    check_invariant();
  }
  // Applies `event` to the replica on `node` only.
  void apply_one(int node, CoherenceEvent event) VERSA_REQUIRES(mutex_) {
    replicas_[node].state = transition(replicas_[node].state, event);
    check_invariant();
  }

  // The host memory to pin (page-lock) before the first copy between it and a device, and its
  // extent in bytes: set at registration for large handles when a device pins host memory
  // (HostPins), taken by the first such copy, so that data never copied is never pinned.
  void pin_before_first_copy(std::shared_ptr<HostPins> pins, std::size_t bytes)
      VERSA_REQUIRES(mutex_) {
    pending_pin_ = std::move(pins);
    pending_pin_bytes_ = bytes;
  }
  std::shared_ptr<HostPins> take_pending_pin(std::size_t& bytes) VERSA_REQUIRES(mutex_) {
    bytes = pending_pin_bytes_;
    return std::move(pending_pin_);
  }

  // Whether the host copy holds zeros that nothing has changed since the user declared them
  // (HandleBase::declare_zero): a device then fills its replica with zeros rather than copy it.
  // Forgotten when anything is about to change the host copy: a task or host access that
  // modifies it there, or a copy into it.
  bool host_zero() const VERSA_REQUIRES(mutex_) { return host_zero_; }
  void declare_host_zero() VERSA_REQUIRES(mutex_) { host_zero_ = true; }
  void forget_host_zero() VERSA_REQUIRES(mutex_) { host_zero_ = false; }

  // Makes the host copy the only valid one, as it is: for a handle whose device copies are
  // dropped without being written home (HandleState::writes_back).
  void keep_home_only() VERSA_REQUIRES(mutex_) {
    for (Replica& r : replicas_) r.state = ReplicaState::invalid;
    replicas_[0].state = ReplicaState::owned;
    check_invariant();
  }

  // A replica with a copy in flight into it, or null.
  Replica* filling() VERSA_REQUIRES(mutex_) {
    for (Replica& r : replicas_)
      if (r.filling) return &r;
    return nullptr;
  }

  // Whether any device replica holds a buffer (the handle needs retiring when destroyed).
  bool on_devices() {
    MutexLock guard(mutex_);
    for (int n = 1; n < nodes(); ++n)
      if (replicas_[n].data) return true;
    return false;
  }

  // A valid replica other than `node` to copy from, not itself filling: the owner if there is
  // one, the host if valid, else any. Null when none.
  Replica* source_for(int node) VERSA_REQUIRES(mutex_) {
    Replica* best = nullptr;
    for (Replica& r : replicas_) {
      if (r.node == node || !is_valid(r.state) || r.filling) continue;
      if (r.state == ReplicaState::owned) return &r;
      if (!best || r.node == 0) best = &r;
    }
    return best;
  }

 private:
  // MSI: one valid copy at least, an owner alone. Checked after every transition.
  void check_invariant() const VERSA_REQUIRES(mutex_) {
#if VERSA_ASSERTS_ON
    int valid = 0;
    int owners = 0;
    for (const Replica& r : replicas_) {
      valid += is_valid(r.state);
      owners += r.state == ReplicaState::owned;
    }
    VERSA_ASSERT(valid > 0, "a handle lost its last valid replica");
    VERSA_ASSERT(owners <= 1, "two owned replicas");
    VERSA_ASSERT(owners == 0 || valid == 1, "an owned replica beside other valid ones");
#endif
  }

  // The number of replicas is fixed at construction, and read without the mutex.
  const int nodes_;
  Mutex mutex_;
  std::vector<Replica> replicas_ VERSA_GUARDED_BY(mutex_);  // fields as documented in Replica
  bool host_zero_ VERSA_GUARDED_BY(mutex_) = false;
  std::shared_ptr<HostPins> pending_pin_ VERSA_GUARDED_BY(mutex_);
  std::size_t pending_pin_bytes_ VERSA_GUARDED_BY(mutex_) = 0;
};

}  // namespace versa::detail
