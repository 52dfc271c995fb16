// DataMover (core/data_mover.hpp): bringing data home. wait_all copies every device-owned
// replica home (of the handles that write back); a handle being destroyed is retired (its
// copies waited for, its data brought home if it writes back, its device buffers freed); renamed
// instances no access will use again are dropped and destroyed once no copy of theirs is in flight;
// shutdown releases every device buffer.
#include <chrono>
#include <condition_variable>
#include <exception>

#include "base/mutex.hpp"
#include "core/data_mover.hpp"
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
    // A copy home already under way (an eviction's) lands first even without write-back: the
    // user's memory must not change after wait_all returns.
    if (host.filling) {
      latch.expect();
      host.fill_waiters.push_back(waiter);
    } else if (!is_valid(host.state) && handle->writes_back()) {
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
// memory must not change after wait_all returns. A device whose copy home failed does not keep
// the others' data away: the first failure is thrown once every device is done.
void DataMover::write_back_resident() {
  destroy_dropped();  // no need to bring dead data home
  std::exception_ptr failure;
  for (int node = 1; node < nodes(); ++node) {
    std::vector<HandleState*> handles = resident_handles(node);
    try {
      write_back(handles, "wait_all");
    } catch (const CopyFailure&) {
      if (!failure) failure = std::current_exception();
    }
  }
  destroy_dropped();  // those whose copies were in flight
  if (failure) std::rethrow_exception(failure);
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

// Write-backs started by eviction may still be landing: waits for them like a task would.
void DataMover::wait_for_copies(ReplicaSet& replicas) {
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
}

void DataMover::retire(HandleState& handle) {
  ReplicaSet& replicas = *handle.replicas();
  wait_for_copies(replicas);
  std::vector<HandleState*> one{&handle};
  std::exception_ptr failure;  // thrown once the device memory is given back all the same
  try {
    write_back(one, "destroying a handle");
  } catch (const CopyFailure&) {
    failure = std::current_exception();
  }
  MutexLock guard(replicas.mutex());
  // Where the host copy is still stale (no write-back, or a failed one), an eviction may have
  // begun a copy home since: the buffers go once it has landed. Nothing starts another while
  // the lock is held.
  while (replicas.filling()) {
    guard.unlock();
    wait_for_copies(replicas);
    guard.lock();
  }
  // A stale host copy is the last version that reached the user's memory: the device copies
  // are dropped all the same.
  if (!is_valid(replicas.at(0).state)) replicas.keep_home_only();
  for (int node = 1; node < replicas.nodes(); ++node) {
    Replica& replica = replicas.at(node);
    if (!replica.data) continue;
    if (is_valid(replica.state)) replicas.apply_one(node, CoherenceEvent::evict);
    free_buffer(replica);
  }
  guard.unlock();
  if (failure) std::rethrow_exception(failure);
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

// A failed copy home leaves the other handles' buffers to be freed and their data to come home:
// the first failure is thrown at the end.
void DataMover::release_all() {
  MutexLock walk(walk_mutex_);
  std::exception_ptr failure;
  try {
    write_back_resident();
  } catch (const CopyFailure&) {
    failure = std::current_exception();
  }
  for (int node = 1; node < nodes(); ++node) {
    for (HandleState* handle : resident_handles(node)) {
      try {
        retire(*handle);
      } catch (const CopyFailure&) {
        if (!failure) failure = std::current_exception();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace versa::detail
