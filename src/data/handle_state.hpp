// The dependency state of one handle, after the data-versioning scheme of SuperGlue
// (shared/reading/superglue-data-versioning.txt, section 3.1).
//
// A handle counts registered accesses and finished accesses (its *version*). Each access gets a
// required version when it is registered: the number of accesses registered before the run of
// compatible accesses it belongs to (consecutive reads share one, so do consecutive commutes and
// consecutive adds). An access may proceed once the version has reached its required version.
// Registering and finishing are O(1) under a per-handle spin lock; checking is one atomic load.
// The worked example holds: read, read, write, add, add, add, write require 0, 0, 2, 3, 3, 3, 6.
//
// Commute accesses of one run must also exclude each other: they take the handle's exclusive
// flag, and tasks that find it taken park in a FIFO until it is released. An add access takes
// the flag when it is free and then writes in place; otherwise it is renamed into a partial
// buffer (data/reduction_engine.hpp), and only waits for the flag when the partials' memory budget
// is spent. A run of adds is closed by a flush access, registered before the next access of another
// mode, which applies the partials to the data.
//
// Renaming (the versions of the dependence-tracking paper, shared/reading/task-graph-schemes-*):
// an access that overwrites the data without reading it (write_only), registered while earlier
// accesses are pending, may get a fresh *instance* of the handle instead: a HandleState of its
// own with a new buffer and fresh counters, which the access finds at version 0 and so runs at
// once. The handle's later accesses register on that instance and wait only for what follows
// the rename; the earlier ones finish on the old buffer. The handle the user holds (the *root*)
// keeps pointing at its newest instance; an instance that is no longer the newest is destroyed
// by the finish of its last access. The user's memory is the root's buffer: bringing the data
// home (acquire, wait_all, destruction) copies the newest instance into it and makes the root
// the newest instance again (Scheduler::bring_home). The instances' life cycle is in
// handle_instances.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "base/spin_lock.hpp"
#include "base/wait_list.hpp"
#include "data/handle_host.hpp"
#include "data/handle_registry.hpp"
#include "data/host_pins.hpp"
#include "data/partial_pool.hpp"
#include "data/partial_slots.hpp"
#include "data/replica.hpp"
#include "data/scratch_memory.hpp"
#include "versa/access_mode.hpp"
#include "versa/detail/task_glue.hpp"
#include "versa/reduction.hpp"

namespace versa::detail {

struct Failure;  // base/failure.hpp: why a task did not produce its outputs

class HandleState;

// What registering an access decided.
struct Registration {
  // The instance the access was registered on: the handle itself, or its newest renamed
  // instance. The access uses it from then on.
  HandleState* instance;
  // The version of `instance` the access requires.
  std::uint64_t required;
  // When not null, a flush access must be registered on `flush_on` at `flush_required` before
  // the access (it closes a run of adds there).
  HandleState* flush_on = nullptr;
  std::uint64_t flush_required = 0;
  // The handle was renamed for the first time in its life: the runtime lists it (wait_all brings
  // the data of listed handles home).
  bool first_rename = false;
  // An instance the registration left behind with nothing pending: the caller destroys it.
  HandleState* drained = nullptr;
};

class HandleState {
 public:
  // `nodes` > 1 gives the handle replicas on that many memory nodes (the runtime has
  // accelerators); a handle without data never has replicas.
  HandleState(void* data, Layout layout, std::string name, HandleHost* owner, int nodes = 1)
      : data_(data),
        layout_(layout),
        packed_layout_{layout.rows, layout.cols, layout.rows, layout.element_size},
        name_(std::move(name)),
        owner_(owner),
        replicas_(nodes > 1 && layout.bytes() > 0 ? std::make_unique<ReplicaSet>(this, data, nodes)
                                                  : nullptr),
        root_(this),
        current_(this) {}
  // A renamed instance of `root`, over `buffer` (packed: ld = rows) taken from `pool`, which
  // gets it back (and the bytes reserved for it) when the instance is destroyed. It has
  // replicas on the root's memory nodes, its host replica being `buffer`; device buffers are
  // reserved as for any handle when a task runs there.
  HandleState(HandleState& root, void* buffer, PartialPool* pool);
  // A renamed instance gives its buffer back to its pool and leaves the registry.
  ~HandleState();
  // Deletes `root`, a retired root, now or, where renamed instances of it are still alive (an
  // older one with a reader pending, one dropped with a copy in flight), once the last of them
  // is destroyed: an instance reads its root's flags (dead, writes_back) until then.
  static void destroy_root(HandleState* root);
  HandleState(const HandleState&) = delete;
  HandleState& operator=(const HandleState&) = delete;

  void* data() const { return data_; }
  // The handle the user holds: itself, unless this is a renamed instance.
  HandleState* root() const { return root_; }
  // The CPU worker that last finished a task modifying the handle (Config::locality), or -1.
  int last_writer() const { return last_writer_.load(std::memory_order_relaxed); }
  void set_last_writer(int worker) { last_writer_.store(worker, std::memory_order_relaxed); }
  const Layout* layout() const { return &layout_; }
  // The layout of device replicas: the same block, stored densely (ld = rows).
  const Layout* packed_layout() const { return &packed_layout_; }
  const std::string& name() const { return name_; }
  HandleHost* owner() const { return owner_; }
  // Null when the runtime has no accelerators or the handle has no data.
  ReplicaSet* replicas() const { return replicas_.get(); }

  // The pin set holding the handle's host memory when the runtime page-locked it for the handle
  // (set once, before the handle is used); null otherwise.
  const std::shared_ptr<HostPins>& host_pins() const { return host_pins_; }
  void set_host_pins(std::shared_ptr<HostPins> pins) { host_pins_ = std::move(pins); }

  // The runtime's registry of handles and the handle's number there (set once, before the
  // handle is used; null and 0 for a handle no runtime listed).
  void set_registry(std::shared_ptr<HandleRegistry> registry, std::uint64_t id) {
    registry_ = std::move(registry);
    id_ = id;
  }
  const std::shared_ptr<HandleRegistry>& registry() const { return registry_; }
  std::uint64_t id() const { return id_; }

  // Makes the handle own `memory`, its data (Runtime::scratch; set once, before the handle is
  // used): it is freed with the handle.
  void own(std::unique_ptr<ScratchMemory> memory) { scratch_memory_ = std::move(memory); }
  // Whether destroying the handle need not wait for its tasks: nothing of the program's memory
  // is at stake, as the runtime owns the data or there is none (a token). Such a handle is kept
  // until its tasks have run, then destroyed.
  bool destroyed_without_waiting() const {
    return scratch_memory_ != nullptr || layout_.bytes() == 0;
  }
  // Marks the handle destroyed by the program while kept by the runtime (keep_until_unused):
  // the thread that ends its last access may then retire it (Finished::released).
  void mark_released() { released_.store(true, std::memory_order_release); }
  bool released() const { return released_.load(std::memory_order_acquire); }
  // Whether this instance's data can never be read again. Either the program destroyed the
  // handle, nothing brings its data home, and no access is pending (none can be added); or this
  // is a root that renaming superseded, none of whose own accesses is pending: later accesses
  // go to newer instances, and bringing the data home overwrites the root's without reading it.
  // A device may drop its copy then, even the only one, instead of writing it home.
  bool dead() {
    HandleState& user_handle = *root_;
    // The root counts its own and its newest instance's accesses only: an older instance may
    // still have a reader of its own pending.
    if (user_handle.released() && !writes_back() && user_handle.pending_accesses() == 0 &&
        (root_ == this || !accesses_pending()))
      return true;
    if (root_ != this) return false;
    SpinGuard guard(lock_);
    return current_ != this && registered_ == version_.load(std::memory_order_relaxed);
  }

  // Who is told when the program destroys the handle (set once, before the handle is used);
  // null for none.
  void set_release_observer(HandleReleaseObserver* observer) { release_observer_ = observer; }
  HandleReleaseObserver* release_observer() const { return release_observer_; }

  // Registers an access in submission order, on the handle's newest instance (called on the
  // root). When the access closes a run of adds, a flush access is registered just before it
  // (Registration::flush_on).
  Registration register_access(AccessMode mode) {
    SpinGuard guard(lock_);
    HandleState* target = current_;
    if (target == this) return register_here(mode);
    SpinGuard target_guard(target->lock_);
    return target->register_here(mode);
  }

  // Whether an access that overwrites the data now would gain from a fresh instance: the newest
  // instance has accesses pending (it would wait for them) and no open run of adds (whose flush
  // nothing later would wait for: a sync() after the adds would not cover it). Racy by nature:
  // the caller decides with it whether to prepare an instance for register_renamed.
  bool worth_renaming();

  // Registers an access that overwrites the data (called on the root) on `fresh`, a new
  // instance, which becomes the newest: the access requires version 0 of it. The previous
  // newest instance gets no more accesses (an open run of adds there is closed by a flush).
  Registration register_renamed(std::unique_ptr<HandleState> fresh, AccessMode mode);

  // Whether accesses register on a renamed instance (the data is not at home).
  bool renamed() {
    SpinGuard guard(lock_);
    return current_ != this;
  }
  // Whether the handle was ever renamed (the runtime lists it until it is destroyed).
  bool ever_renamed() {
    SpinGuard guard(lock_);
    return ever_renamed_;
  }
  // Called by the runtime's end once the root is the newest instance again and the runtime no
  // longer lists the handle: destroying a handle that outlives the runtime then asks nothing of
  // it.
  void forget_renaming() {
    SpinGuard guard(lock_);
    ever_renamed_ = false;
  }

  // Registers the two halves of bringing the data home (called on the root): an access that
  // excludes every other on the newest instance (`instance` receives it, `instance_required`
  // its version) and one on the root (the returned version), after which the root is the
  // newest instance again. Returns false when the data is at home already.
  bool register_homecoming(HandleState*& instance, std::uint64_t& instance_required,
                           std::uint64_t& root_required, Registration& closing);
  // Ends renaming without bringing the data home (called on the root, when nobody reads its
  // data at home: memory the handle owns, freed next, or a handle without write-back): when
  // the newest instance holds no open run of adds and no partial sums, it is retired and
  // returned for the caller to drop, and the root is the newest again. Null when the data is
  // home or the instance needs a homecoming to apply its adds. No access may be pending.
  HandleState* drop_newest_instance();
  // Whether the newest instance's data is up to date in its host memory, where bringing it home
  // is a copy within host memory: no device holds a newer copy (called on the root, nothing
  // pending).
  bool newest_in_host_memory();

  // Closes an open run of adds on this instance with a flush access (wait_all, handle
  // destruction): returns whether it did, and the version the flush requires.
  bool close_add_run(std::uint64_t& flush_required) {
    SpinGuard guard(lock_);
    if (run_mode_ != AccessMode::add) return false;
    flush_required = registered_++;
    flushed_at_ = registered_;
    run_mode_ = AccessMode::write;  // no run open
    return true;
  }

  // --- reductions ---
  // The operator of add accesses; null until bound. Bound at most once per run of adds.
  const ReductionOps* reduction() const { return reduction_.load(std::memory_order_acquire); }
  // Binds `ops` (kept alive by `owner` when given). Returns "" or why it cannot: the handle is
  // bound to another operator and `replace` is false, or a run of adds is open.
  std::string bind_reduction(const ReductionOps* ops, std::shared_ptr<const ReductionOps> owner,
                             bool replace) {
    SpinGuard guard(lock_);
    const ReductionOps* current = reduction_.load(std::memory_order_relaxed);
    if (current == ops) return {};
    if (current && !replace) return "it is reduced with operator '" + current->name + "' already";
    if (current && run_mode_ == AccessMode::add &&
        (registered_ != version_.load(std::memory_order_relaxed) || !slots_->empty()))
      return "a run of add accesses with operator '" + current->name + "' is still open";
    // A closed run's adds and flush read the operator when they run.
    if (current && version_.load(std::memory_order_relaxed) < flushed_at_)
      return "the partial sums of a run of add accesses with operator '" + current->name +
             "' are still to be applied";
    if (!slots_) slots_ = std::make_unique<PartialSlots>(replicas_ ? replicas_->nodes() : 1);
    if (current_ && current_ != this) {
      const std::string refused = current_->bind_reduction(ops, owner, replace);
      if (!refused.empty()) return refused;
    }
    reduction_owner_ = std::move(owner);
    reduction_.store(ops, std::memory_order_release);
    return {};
  }
  // The partial buffers of the open run of adds; null until an operator is bound.
  PartialSlots* partials() const { return slots_.get(); }

  bool has_version(std::uint64_t required) const {
    return version_.load(std::memory_order_acquire) >= required;
  }
  // The same, under the lock: once true, the access that reached the version is done with the
  // handle (it bumps the version under the lock), so the caller may destroy it.
  bool has_version_settled(std::uint64_t required) {
    SpinGuard guard(lock_);
    return version_.load(std::memory_order_relaxed) >= required;
  }

  // Parks `waiter` until the version reaches `required`. Returns false, without parking, when
  // the version was reached meanwhile (the caller goes on with its next check).
  bool park_until(Waiter* waiter, std::uint64_t required) {
    SpinGuard guard(lock_);
    if (version_.load(std::memory_order_relaxed) >= required) return false;
    waiter->wait_version = required;
    version_waiters_.insert(waiter);
    return true;
  }

  // Takes the exclusive flag of commute/add runs without waiting. Returns whether it was taken.
  bool try_take_exclusive() {
    SpinGuard guard(lock_);
    if (exclusive_held_) return false;
    exclusive_held_ = true;
    return true;
  }

  // Takes the flag, or parks `waiter` until it is released. Returns true if taken.
  bool take_exclusive_or_park(Waiter* waiter) {
    SpinGuard guard(lock_);
    if (!exclusive_held_) {
      exclusive_held_ = true;
      return true;
    }
    exclusive_waiters_.push_back(waiter);
    return false;
  }

  // Releases the exclusive flag taken by a task that did not run after all; wakes one waiter.
  template <class Wake>
  void give_back_exclusive(Wake&& wake) {
    Waiter* next;
    {
      SpinGuard guard(lock_);
      exclusive_held_ = false;
      next = exclusive_waiters_.pop_ready(UINT64_MAX);
    }
    if (next) wake(next);
  }

  // What the end of an access leaves to its caller.
  enum class Finished {
    more,      // nothing
    drained,   // the last access of an instance that is no longer the newest: the caller
               // destroys it (nobody else may touch it any more)
    released,  // the last access of a handle the program destroyed (mark_released), never
               // renamed: the caller may retire it (HandleHost::retire_released)
  };

  // Ends one access: bumps the version, releases the exclusive flag if the access held it, and
  // calls `wake` (outside the lock) for every parked task that may now go on.
  template <class Wake>
  Finished finish_access(bool held_exclusive, Wake&& wake) {
    Waiter* woken = nullptr;  // singly linked through wait_next, in wake order
    Waiter** tail = &woken;
    Finished finished = Finished::more;
    {
      SpinGuard guard(lock_);
      const std::uint64_t version = version_.load(std::memory_order_relaxed) + 1;
      version_.store(version, std::memory_order_release);
      if (version == registered_) {
        if (retired_)
          finished = Finished::drained;
        else if (current_ == this && !ever_renamed_ && released())
          finished = Finished::released;
      }
      while (Waiter* w = version_waiters_.pop_ready(version)) {
        *tail = w;
        tail = &w->wait_next;
      }
      if (held_exclusive) {
        exclusive_held_ = false;
        if (Waiter* w = exclusive_waiters_.pop_ready(UINT64_MAX)) {
          *tail = w;
          tail = &w->wait_next;
        }
      }
    }
    while (woken) {
      Waiter* w = woken;
      woken = w->wait_next;
      w->wait_next = nullptr;
      wake(w);
    }
    return finished;
  }

  // Views from Runtime::acquire that are alive (registered and not yet released).
  void host_view_opened() { host_views_.fetch_add(1, std::memory_order_relaxed); }
  void host_view_closed() { host_views_.fetch_sub(1, std::memory_order_release); }
  int host_views() const { return host_views_.load(std::memory_order_acquire); }
  // Accesses registered on this instance so far.
  std::uint64_t registered_accesses() {
    SpinGuard guard(lock_);
    return registered_;
  }
  // Whether an access registered on this instance after a host view waits for the view's end.
  // The view is of `mode`, in the run that requires `required`, and `registered_then` accesses
  // were registered here just after it. A later access of another run waits for the view's
  // run. One of the view's own run waits too where the run's accesses exclude each other
  // (for the exclusive flag, which the view holds) or are adds (a host add holds the flag; an
  // add renamed into a partial waits at the flush that closes the run); readers share the run.
  bool waits_behind_view(AccessMode mode, std::uint64_t required, std::uint64_t registered_then) {
    SpinGuard guard(lock_);
    if (registered_ == registered_then) return false;
    if (run_mode_ != mode || run_required_ != required || !forms_runs(mode)) return true;
    return needs_exclusive(mode) || mode == AccessMode::add;
  }
  // Whether bringing the data home would wait for the accesses of `instance`, one of this
  // root's instances: the data is renamed, and the homecoming registers after them (on the
  // root, or on the newest instance).
  bool homecoming_waits_for(const HandleState* instance) {
    SpinGuard guard(lock_);
    return current_ != this && (instance == this || instance == current_);
  }

  // What the diagnostics show of the handle, read at one instant under its lock: the version,
  // the accesses registered, whether the exclusive flag is taken, and, through
  // `visit(const Waiter&, bool for_flag)`, each parked task (waiting for a version, or for the
  // flag). The waiters' tasks cannot finish while `visit` runs.
  struct Snapshot {
    std::uint64_t version;
    std::uint64_t registered;
    bool exclusive_held;
  };
  template <class Visit>
  Snapshot inspect(Visit&& visit) {
    SpinGuard guard(lock_);
    version_waiters_.for_each([&](const Waiter& w) { visit(w, false); });
    exclusive_waiters_.for_each([&](const Waiter& w) { visit(w, true); });
    return {version_.load(std::memory_order_relaxed), registered_, exclusive_held_};
  }

  // Whether accesses registered on this instance are still to finish (a hint: more may be
  // registered at any time).
  bool accesses_pending() {
    SpinGuard guard(lock_);
    return registered_ != version_.load(std::memory_order_relaxed);
  }

  // Accesses registered but not finished, on the handle and on its newest instance.
  std::uint64_t pending_accesses() {
    SpinGuard guard(lock_);
    const std::uint64_t here = registered_ - version_.load(std::memory_order_relaxed);
    HandleState* newest = current_;
    if (!newest || newest == this) return here;
    SpinGuard newest_guard(newest->lock_);
    return here + newest->registered_ - newest->version_.load(std::memory_order_relaxed);
  }

  // Whether wait_all and the handle's destruction copy device-owned data home (HandleBase::
  // set_write_back, on the root; its renamed instances follow it). Any thread.
  bool writes_back() const { return root_->write_back_.load(std::memory_order_relaxed); }
  void set_write_back(bool write_back) { write_back_.store(write_back, std::memory_order_relaxed); }

  // --- failures ---
  // A failed or cancelled task poisons the handle's value *after* its access, in program order.
  // The accesses of one run of adds or commutes see the value from before the run, so one that
  // fails spoils what the run leaves, not what its siblings read; an access with required
  // version q therefore sees a poison set by an access that required r < q, and never one set
  // within its own run (r == q). This keeps the outcome independent of timing: every access
  // with r < q has finished when the access with q runs, and none with r >= q affects it.

  // Whether a failure left the data unusable for some access (poison_before says for which).
  bool poisoned() const { return poisoned_.load(std::memory_order_acquire); }
  // The failure that leaves the data unusable for an access that requires `required`, or null.
  std::shared_ptr<const Failure> poison_before(std::uint64_t required) {
    // Set before the poisoning access finishes, which happens before any access that waits
    // for it starts (the version's release/acquire): the flag spares the lock on the fast path.
    if (!poisoned_.load(std::memory_order_acquire)) return nullptr;
    SpinGuard guard(lock_);
    return poisoned_by_ < required ? poison_ : nullptr;
  }
  // Records that the access with required version `required` did not produce the handle's
  // value. A poison already there stands: it is at least as early in program order.
  void poison(std::shared_ptr<const Failure> failure, std::uint64_t required) {
    SpinGuard guard(lock_);
    if (poison_) return;
    poison_ = std::move(failure);
    poisoned_by_ = required;
    poisoned_.store(true, std::memory_order_release);
  }
  // An access that ran and overwrote everything (write_only, or a user mode that writes without
  // reading), of the run that requires `required`: the data spoilt before its run is valid
  // again. A failure within its run (a sibling's, in a mode that forms runs) stands, whichever
  // finished first. Without a version: whatever the poison (data brought home).
  void clear_poison(std::uint64_t required = UINT64_MAX) {
    if (!poisoned_.load(std::memory_order_acquire)) return;
    SpinGuard guard(lock_);
    if (!poison_ || poisoned_by_ >= required) return;
    poison_.reset();
    poisoned_.store(false, std::memory_order_release);
  }

 private:
  // Registers an access on this instance.
  Registration register_here(AccessMode mode) VERSA_REQUIRES(lock_) {
    Registration registration{this, 0};
    if (!(forms_runs(mode) && mode == run_mode_)) {
      if (run_mode_ == AccessMode::add) {
        registration.flush_on = this;
        registration.flush_required = registered_++;
        flushed_at_ = registered_;
      }
      run_required_ = registered_;
      run_mode_ = mode;
    }
    ++registered_;
    registration.required = run_required_;
    return registration;
  }

  bool busy_without_adds() VERSA_REQUIRES(lock_);

  // This instance stops being the newest: an open run of adds is closed by a flush, and a
  // renamed instance with nothing pending is handed to the caller to destroy.
  void close_for_rename(Registration& registration) VERSA_REQUIRES(lock_);

  void* const data_;
  const Layout layout_;
  const Layout packed_layout_;
  const std::string name_;
  HandleHost* const owner_;
  const std::unique_ptr<ReplicaSet> replicas_;
  HandleState* root_;                   // set at construction
  PartialPool* buffer_pool_ = nullptr;  // a renamed instance's: where data_ goes back
  // A root's renamed instances alive, and root_retired once the root is retired
  // (destroy_root): the last instance destroyed after that deletes the root.
  static constexpr std::uint32_t root_retired = 1u << 31;
  std::atomic<std::uint32_t> instances_alive_{0};

  SpinLock lock_;
  // The root's newest instance (itself when the data is at home); null in renamed instances.
  HandleState* current_ VERSA_GUARDED_BY(lock_);
  // A renamed instance that is no longer the newest: it gets no more accesses.
  bool retired_ VERSA_GUARDED_BY(lock_) = false;
  // A root that was renamed at least once (Registration::first_rename).
  bool ever_renamed_ VERSA_GUARDED_BY(lock_) = false;
  std::uint64_t registered_ VERSA_GUARDED_BY(lock_) = 0;
  std::uint64_t run_required_ VERSA_GUARDED_BY(lock_) = 0;
  // The version once the last flush registered has run (0: none): until then the operator of
  // its run is still in use.
  std::uint64_t flushed_at_ VERSA_GUARDED_BY(lock_) = 0;
  AccessMode run_mode_ VERSA_GUARDED_BY(lock_) = AccessMode::write;  // write: no run open
  // Finished accesses. Written under lock_ with release order so that a task that observes the
  // version (acquire) also observes the data its predecessors wrote.
  std::atomic<std::uint64_t> version_{0};
  WaitList version_waiters_ VERSA_GUARDED_BY(lock_);
  bool exclusive_held_ VERSA_GUARDED_BY(lock_) = false;
  WaitList exclusive_waiters_ VERSA_GUARDED_BY(lock_);

  std::atomic<const ReductionOps*> reduction_{nullptr};
  std::shared_ptr<const ReductionOps> reduction_owner_ VERSA_GUARDED_BY(lock_);
  std::unique_ptr<PartialSlots> slots_;  // created under lock_ before reduction_ is published

  std::shared_ptr<HostPins> host_pins_;
  std::shared_ptr<HandleRegistry> registry_;
  std::uint64_t id_ = 0;
  HandleReleaseObserver* release_observer_ = nullptr;
  std::shared_ptr<const Failure> poison_ VERSA_GUARDED_BY(lock_);
  std::uint64_t poisoned_by_ VERSA_GUARDED_BY(lock_) = 0;  // required version of the poisoner
  std::atomic<bool> poisoned_{false};                      // poison_ != null
  std::atomic<int> host_views_{0};
  std::atomic<int> last_writer_{-1};
  std::atomic<bool> write_back_{true};
  std::unique_ptr<ScratchMemory> scratch_memory_;  // null unless the runtime allocated data_
  std::atomic<bool> released_{false};
};

}  // namespace versa::detail
