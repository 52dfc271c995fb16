// The handles of one runtime, listed for the diagnostics that walk them (Runtime::
// describe_pending, the stall report). Creating and destroying a handle is not hot, so a map
// under a mutex does.
//
// Shared between the runtime and its handles (std::shared_ptr): a handle may outlive its
// runtime, and leaves the registry when it is destroyed whichever goes first. Through it a handle
// also reaches its runtime while the runtime lives (set_runtime).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class HandleState;
class HandleHost;

class HandleRegistry {
 public:
  // A number for a new handle: 1, 2, ... in creation order, never reused (the diagnostics and
  // the DOT file name unnamed handles by it). Given to the handle before add() lists it.
  std::uint64_t next_id() {
    MutexLock guard(mutex_);
    return next_id_++;
  }
  // Lists `handle` under its number.
  void add(std::uint64_t id, HandleState* handle) {
    MutexLock guard(mutex_);
    handles_.emplace(id, handle);
  }

  // Unlists the handle numbered `id`; called before it is deleted.
  void remove(std::uint64_t id) {
    MutexLock guard(mutex_);
    handles_.erase(id);
  }

  // The runtime, while it lives (set by it, cleared before it goes): a handle destroyed, or given
  // a reduction operator, first has the runtime register the tasks whose registration it handed
  // to its workers (Config::defer_registration). The registry lives as long as the runtime or
  // any of its handles, so a handle that outlives its runtime finds nothing here.
  void set_runtime(HandleHost* runtime) { runtime_.store(runtime, std::memory_order_release); }
  void register_deferred_tasks();  // handle_release.cpp

  // Calls `visit(HandleState&)` for each listed handle in creation order, holding the registry's
  // lock: no listed handle can be deleted meanwhile. `visit` may take the handles' locks (the
  // order is registry, then handle), and must not call back into the registry.
  template <class Visit>
  void for_each(Visit&& visit) {
    MutexLock guard(mutex_);
    for (const auto& [id, handle] : handles_) visit(*handle);
  }

 private:
  Mutex mutex_;
  std::uint64_t next_id_ VERSA_GUARDED_BY(mutex_) = 1;
  std::map<std::uint64_t, HandleState*> handles_ VERSA_GUARDED_BY(mutex_);
  std::atomic<HandleHost*> runtime_{nullptr};
};

}  // namespace versa::detail
