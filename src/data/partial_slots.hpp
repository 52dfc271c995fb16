// The partial results of one handle's open run of add accesses: at most one buffer per memory
// node. A finishing add task puts its partial in its node's slot; when the slot is taken it
// takes the occupant out instead, merges the two outside the lock and tries again, so merges on
// one node run in parallel with everything else and never under a lock.
#pragma once

#include <utility>
#include <vector>

#include "core/spin_lock.hpp"
#include "core/thread_annotations.hpp"

namespace versa::detail {

class PartialSlots {
 public:
  explicit PartialSlots(int nodes) : slots_(static_cast<std::size_t>(nodes), nullptr) {}

  // Puts `partial` in `node`'s slot and returns null, or, when the slot is taken, empties it and
  // returns its occupant (the caller merges it into `partial` and calls again). `first` is set
  // when every slot was empty before this put.
  void* put_or_take(int node, void* partial, bool& first) {
    SpinGuard guard(lock_);
    first = false;
    void*& slot = slots_[static_cast<std::size_t>(node)];
    if (slot) {
      --filled_;
      return std::exchange(slot, nullptr);
    }
    slot = partial;
    first = filled_++ == 0;
    return nullptr;
  }

  // Empties every slot: entry n is node n's partial or null.
  std::vector<void*> take_all() {
    SpinGuard guard(lock_);
    std::vector<void*> taken(slots_.size(), nullptr);
    taken.swap(slots_);
    filled_ = 0;
    return taken;
  }

  // Whether `node`'s slot holds the only partial.
  bool only_on(int node) {
    SpinGuard guard(lock_);
    return filled_ == 1 && slots_[static_cast<std::size_t>(node)] != nullptr;
  }

  bool empty() {
    SpinGuard guard(lock_);
    return filled_ == 0;
  }

 private:
  SpinLock lock_;
  std::vector<void*> slots_ VERSA_GUARDED_BY(lock_);
  int filled_ VERSA_GUARDED_BY(lock_) = 0;  // slots in use
};

}  // namespace versa::detail
