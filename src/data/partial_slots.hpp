// The partial results of one handle's open run of add accesses.
//
// Host partials form a pool: a renamed add starting on a CPU worker takes one (take_host) and
// adds into it, and puts it back when it finishes, so a run accumulates into as many buffers as
// adds ran at once, each written with the identity once (what OpenMP does with one private copy
// per thread). A device node has one slot: a finishing add puts its partial there or, when the
// slot is taken, takes the occupant out instead, merges the two outside the lock and tries
// again, so merges run in parallel with everything else and never under a lock.
#pragma once

#include <utility>
#include <vector>

#include "base/spin_lock.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class PartialSlots {
 public:
  explicit PartialSlots(int nodes) : device_(static_cast<std::size_t>(nodes), nullptr) {}

  // Every partial of the run: the host's, and device_[n] for device node n (entry 0 unused).
  struct Taken {
    std::vector<void*> host;
    std::vector<void*> device;
  };

  // Puts `partial` in `node`'s place and returns null, or, when `node` is a device whose slot is
  // taken, empties it and returns its occupant (the caller merges it into `partial` and calls
  // again). `first` is set by the run's first put.
  void* put_or_take(int node, void* partial, bool& first) {
    SpinGuard guard(lock_);
    first = false;
    if (node == 0) {
      host_.push_back(partial);
    } else {
      void*& slot = device_[static_cast<std::size_t>(node)];
      if (slot) {
        --filled_;
        return std::exchange(slot, nullptr);
      }
      slot = partial;
    }
    ++filled_;
    first = !had_partial_;
    had_partial_ = true;
    return nullptr;
  }

  // Takes a host partial for an add about to run on the host, or returns null when none is free.
  void* take_host() {
    SpinGuard guard(lock_);
    if (host_.empty()) return nullptr;
    void* partial = host_.back();
    host_.pop_back();
    --filled_;
    return partial;
  }

  // Empties every slot.
  Taken take_all() {
    SpinGuard guard(lock_);
    Taken taken{{}, std::vector<void*>(device_.size(), nullptr)};
    taken.host.swap(host_);
    taken.device.swap(device_);
    filled_ = 0;
    had_partial_ = false;
    return taken;
  }

  // Whether device `node`'s slot holds the only partial.
  bool only_on(int node) {
    SpinGuard guard(lock_);
    return filled_ == 1 && device_[static_cast<std::size_t>(node)] != nullptr;
  }

  bool empty() {
    SpinGuard guard(lock_);
    return filled_ == 0;
  }

 private:
  SpinLock lock_;
  std::vector<void*> host_ VERSA_GUARDED_BY(lock_);
  std::vector<void*> device_ VERSA_GUARDED_BY(lock_);
  int filled_ VERSA_GUARDED_BY(lock_) = 0;  // partials held
  bool had_partial_ VERSA_GUARDED_BY(lock_) = false;
};

}  // namespace versa::detail
