// What a handle needs of the runtime it belongs to: an interface the runtime core implements,
// so that src/data, below it, calls up without including it (docs/architecture.md, "Layers").
#pragma once

#include <string>

namespace versa::detail {

class HandleState;

// Destroys `handle` as releasing its last reference does, if no view from acquire() on it is
// alive and none of its accesses is pending; otherwise leaves it and returns false
// (handle_release.cpp).
bool retire_if_unused(HandleState* handle);
// Destroys `handle`, which the program destroyed and nothing uses any more, if that waits for
// nothing: it was never renamed, holds no partial sums, and no copy of its is in flight (and
// none can start: it is not written back). Otherwise leaves it and returns false.
bool retire_at_once(HandleState* handle);

// The runtime a handle belongs to, as the handle sees it.
class HandleHost {
 public:
  // Records misuse that cannot be thrown at the call that caused it (rethrown by wait_all).
  virtual void report_misuse(std::string message) = 0;
  // Called when the handle is destroyed and no access is pending: brings the data home to the
  // user's memory and frees the device replicas.
  virtual void retire_replicas(HandleState& handle) = 0;
  // Called when the handle is destroyed with accesses pending or reduction partials not yet
  // applied: applies the partials and waits until every access registered has finished.
  virtual void settle(HandleState& handle) = 0;
  // Called when a handle that was ever renamed is destroyed: copies its data home if it is in a
  // renamed instance, after the accesses registered before, and forgets the handle. Where
  // nobody reads the data at home (memory the handle owns, HandleState::
  // destroyed_without_waiting, or a handle that does not write back) its newest instance is
  // dropped instead, if that loses no partial sums.
  virtual void end_renaming(HandleState& handle) = 0;
  // Registers the tasks whose registration was handed to the workers (Config::
  // defer_registration) before a handle is looked at: destroyed, or given an operator. Reached
  // through the handle's registry (HandleRegistry::register_deferred_tasks), and only while the
  // runtime lives.
  virtual void register_deferred_tasks() = 0;
  // Called when the handle is destroyed while a view from acquire() on it is alive (it cannot be
  // waited for: the destroying thread may hold the view), or with accesses pending when it need
  // not be waited for (HandleState::destroyed_without_waiting): the runtime keeps it and
  // destroys it with retire_if_unused once the view is released and its accesses have finished.
  virtual void keep_until_unused(HandleState& handle) = 0;
  // Called by the thread that finished the last access of a handle the program destroyed
  // (HandleState::Finished::released), which may be a worker or a device's thread: if the
  // handle is kept (keep_until_unused), destroys it at once where that needs no waiting
  // (retire_at_once), else leaves it kept. `handle` may have been destroyed already by the
  // program's thread, which retires kept handles too: it is only looked up among the kept ones.
  virtual void retire_released(const HandleState* handle) = 0;

 protected:
  ~HandleHost() = default;
};

// Told when the program destroys a handle, before the runtime waits for or retires it: a layer
// above the runtime that keeps its own record of the handle (versa::mpi's directory) ends it
// there, so that a handle made later at the same address is not taken for this one. Called on
// the destroying thread; must outlive the handles it observes.
class HandleReleaseObserver {
 public:
  virtual void handle_released(HandleState& handle) = 0;

 protected:
  ~HandleReleaseObserver() = default;
};

}  // namespace versa::detail
