// The renamed instances of a handle (handle_state.hpp, "Renaming"): how one is made and given
// back, how an overwrite registers on a fresh one, and how the data comes home to the root.
// Out of line, apart from the dependency counting that every access runs: this runs when a
// handle is destroyed and for accesses that overwrite.
#include <memory>
#include <utility>

#include "data/handle_state.hpp"

namespace versa::detail {

HandleState::HandleState(HandleState& root, void* buffer, PartialPool* pool)
    : HandleState(buffer, root.packed_layout_, root.name_, root.owner_,
                  root.replicas_ ? root.replicas_->nodes() : 1) {
  root_ = &root;
  current_ = nullptr;
  buffer_pool_ = pool;
  root.instances_alive_.fetch_add(1, std::memory_order_relaxed);
  // Listed under a number of its own: the diagnostics show its waiters, and the DOT file's
  // versions are per instance.
  if (root.registry_) {
    registry_ = root.registry_;
    id_ = registry_->next_id();
    registry_->add(id_, this);
  }
}

HandleState::~HandleState() {
  if (buffer_pool_ && registry_) registry_->remove(id_);
  if (buffer_pool_) {
    buffer_pool_->give(data_, layout_.bytes());
    buffer_pool_->release(layout_.bytes());
  }
  // The last touch of the root: a retired root goes with its last instance.
  if (root_ != this &&
      root_->instances_alive_.fetch_sub(1, std::memory_order_acq_rel) == (root_retired | 1))
    delete root_;
}

void HandleState::destroy_root(HandleState* root) {
  if (root->instances_alive_.fetch_or(root_retired, std::memory_order_acq_rel) == 0) delete root;
}

bool HandleState::worth_renaming() {
  SpinGuard guard(lock_);
  HandleState* target = current_;
  if (target == this) return busy_without_adds();
  SpinGuard target_guard(target->lock_);
  return target->busy_without_adds();
}

Registration HandleState::register_renamed(std::unique_ptr<HandleState> fresh, AccessMode mode) {
  SpinGuard guard(lock_);
  HandleState* previous = current_;
  Registration registration{fresh.get(), 0};
  if (previous == this) {
    close_for_rename(registration);
  } else {
    SpinGuard previous_guard(previous->lock_);
    previous->close_for_rename(registration);
  }
  registration.first_rename = !std::exchange(ever_renamed_, true);
  HandleState* instance = fresh.release();
  if (const ReductionOps* ops = reduction_.load(std::memory_order_relaxed))
    instance->bind_reduction(ops, reduction_owner_, true);
  SpinGuard instance_guard(instance->lock_);
  instance->register_here(mode);
  current_ = instance;
  return registration;
}

bool HandleState::register_homecoming(HandleState*& instance, std::uint64_t& instance_required,
                                      std::uint64_t& root_required, Registration& closing) {
  SpinGuard guard(lock_);
  instance = current_;
  if (instance == this) return false;
  {
    SpinGuard instance_guard(instance->lock_);
    closing = instance->register_here(AccessMode::write);
    instance_required = closing.required;
    instance->retired_ = true;
  }
  root_required = register_here(AccessMode::write).required;
  current_ = this;
  return true;
}

HandleState* HandleState::drop_newest_instance() {
  SpinGuard guard(lock_);
  HandleState* instance = current_;
  if (instance == this) return nullptr;
  SpinGuard instance_guard(instance->lock_);
  if (instance->run_mode_ == AccessMode::add || (instance->slots_ && !instance->slots_->empty()))
    return nullptr;
  instance->retired_ = true;
  current_ = this;
  return instance;
}

bool HandleState::newest_in_host_memory() {
  HandleState* newest = nullptr;
  {
    SpinGuard guard(lock_);
    newest = current_;
  }
  ReplicaSet* replicas = newest->replicas();
  if (!replicas) return true;
  MutexLock guard(replicas->mutex());
  return is_valid(replicas->at(0).state);
}

bool HandleState::busy_without_adds() {
  return registered_ != version_.load(std::memory_order_relaxed) && run_mode_ != AccessMode::add;
}

void HandleState::close_for_rename(Registration& registration) {
  if (run_mode_ == AccessMode::add) {
    registration.flush_on = this;
    registration.flush_required = registered_++;
    flushed_at_ = registered_;
    run_mode_ = AccessMode::write;  // no run open
  }
  if (root_ == this) return;
  retired_ = true;
  if (registered_ == version_.load(std::memory_order_relaxed)) registration.drained = this;
}

}  // namespace versa::detail
