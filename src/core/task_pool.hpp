// Memory for tasks: fixed-size slots carved from slabs and recycled through per-worker caches.
//
// Tasks are usually created by one thread (the main program) and freed by others (the workers),
// so a plain free list per thread would drain on one side and grow on the other. Caches
// therefore exchange whole batches through a shared depot (a mutex taken once per batch), like a
// magazine allocator: the cost per task is a vector push or pop. Threads that are not workers
// (the main program) keep a thread-local cache tagged with the pool's id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/mutex.hpp"
#include "base/task.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class TaskPool {
 public:
  explicit TaskPool(int workers);
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Returns uninitialised storage for one Task. `worker` is the caller's worker index, or -1.
  // In line, as release: a fine-grained task calls each once.
  void* allocate(int worker);
  // Takes back storage of a destroyed Task.
  void release(void* slot, int worker);

  // Bytes of slab memory obtained so far.
  std::size_t bytes_reserved() const;

 private:
  struct alignas(alignof(Task)) Slot {
    std::byte bytes[sizeof(Task)];
  };
  struct alignas(64) Cache {
    std::vector<void*> free;
  };
  Cache& external_cache();
  static constexpr std::size_t batch = 64;
  // Slabs of about 1 MiB from the C++ heap, which keeps memory a runtime returns: a runtime
  // created after another one reuses it without paying first-touch page faults again (on virtual
  // machines a first touch costs more than the task itself).
  static constexpr std::size_t slab_slots = (std::size_t{1} << 20) / sizeof(Slot) / batch * batch;

  [[gnu::noinline]] void refill(Cache& cache);
  // Allocates a slab and puts its slots in the depot, a batch at a time.
  void carve_slab() VERSA_REQUIRES(depot_mutex_);
  [[gnu::noinline]] void spill(Cache& cache);

  const std::uint64_t id_;            // tags the thread-local caches of non-worker threads
  std::vector<Cache> worker_caches_;  // each owned by its worker thread

  mutable Mutex depot_mutex_;
  std::vector<std::vector<void*>> depot_ VERSA_GUARDED_BY(depot_mutex_);  // full batches
  std::vector<std::unique_ptr<Slot[]>> slabs_ VERSA_GUARDED_BY(depot_mutex_);
};

inline void* TaskPool::allocate(int worker) {
  Cache& cache = worker >= 0 ? worker_caches_[worker] : external_cache();
  if (cache.free.empty()) refill(cache);
  void* slot = cache.free.back();
  cache.free.pop_back();
  // On a submitting thread, the next slot was freed by a worker whose cache still holds its
  // lines: fetching them for writing now overlaps that transfer with this task's submission,
  // rather than stalling the next one on its first stores (on a worker they are already here).
  if (worker < 0 && !cache.free.empty()) {
    const auto* next = static_cast<const char*>(cache.free.back());
    __builtin_prefetch(next, 1);
    __builtin_prefetch(next + 64, 1);
    __builtin_prefetch(next + 127, 1);
  }
  return slot;
}

inline void TaskPool::release(void* slot, int worker) {
  Cache& cache = worker >= 0 ? worker_caches_[worker] : external_cache();
  cache.free.push_back(slot);
  if (cache.free.size() >= 2 * batch) spill(cache);
}

}  // namespace versa::detail
