// Destruction of handles, including the misuse of destroying one that tasks still use.
#include <stdexcept>

#include "base/names.hpp"
#include "data/handle_host.hpp"
#include "data/handle_registry.hpp"
#include "data/handle_state.hpp"
#include "versa/handle.hpp"

namespace versa::detail {

void HandleRegistry::register_deferred_tasks() {
  if (HandleHost* runtime = runtime_.load(std::memory_order_acquire))
    runtime->register_deferred_tasks();
}

namespace {
// Destroys a handle nobody uses any more: its partials are applied and its data goes home from
// the devices first (apart from data that dies with it: HandleHost::end_renaming).
void retire(HandleState* state) {
  if (state->ever_renamed()) state->owner()->end_renaming(*state);
  if (state->partials() && !state->partials()->empty()) state->owner()->settle(*state);
  if (state->replicas() && state->replicas()->on_devices()) state->owner()->retire_replicas(*state);
  if (state->host_pins()) state->host_pins()->unpin(state->data());
  if (state->registry()) state->registry()->remove(state->id());
  HandleState::destroy_root(state);
}
}  // namespace

bool retire_if_unused(HandleState* state) {
  if (state->host_views() > 0 || state->pending_accesses() > 0) return false;
  retire(state);
  return true;
}

bool retire_at_once(HandleState* state) {
  if (state->host_views() > 0 || state->pending_accesses() > 0 || state->ever_renamed())
    return false;
  if (state->partials() && !state->partials()->empty()) return false;
  if (ReplicaSet* replicas = state->replicas()) {
    // Retiring waits for the copies home in flight, and starts one for data written back: a
    // device's thread, which may be this one, completes them, so waiting could never end.
    // Eviction starts none for dead data without write-back (HandleState::dead).
    if (state->writes_back()) return false;
    MutexLock guard(replicas->mutex());
    if (replicas->filling()) return false;
  }
  retire(state);
  return true;
}

void release_handle(HandleState* state) {
  if (!state) return;
  if (HandleReleaseObserver* observer = state->release_observer())
    observer->handle_released(*state);
  // The tasks submitted before count among the handle's accesses.
  if (state->registry()) state->registry()->register_deferred_tasks();
  const std::uint64_t pending = state->pending_accesses();
  if (pending == 0) {
    retire(state);
    return;
  }
  // Nothing of the program's memory is at stake: its tasks run on, and the runtime destroys it
  // after them.
  if (state->destroyed_without_waiting()) {
    state->mark_released();
    state->owner()->keep_until_unused(*state);
    return;
  }
  const std::string handle = quoted_handle(state->name());
  // A view from acquire() may be held by the very thread destroying the handle: waiting would
  // never end. The state stays allocated, so that the view's release stays safe, until the
  // runtime finds it unused.
  if (state->host_views() > 0) {
    state->owner()->report_misuse(handle +
                                  " was destroyed while a view from acquire() on it was alive; "
                                  "release the view first (the handle is destroyed once the view "
                                  "is released and its tasks have run)");
    state->owner()->keep_until_unused(*state);
    return;
  }
  state->owner()->report_misuse(handle + " was destroyed while " + std::to_string(pending) +
                                " of its accesses were pending; waiting for them to finish");
  state->owner()->settle(*state);
  retire(state);
}

}  // namespace versa::detail
