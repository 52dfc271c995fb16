// Memory for tasks: fixed-size slots carved from slabs and recycled through per-worker caches.
//
// Tasks are usually created by one thread (the main program) and freed by others (the workers),
// so a plain free list per thread would drain on one side and grow on the other. Caches
// therefore exchange whole batches through a shared depot (a mutex taken once per batch), like a
// magazine allocator: the cost per task is a vector push or pop. Threads that are not workers
// (the main program) keep a thread-local cache tagged with the pool's id.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <cstdint>
#include "core/task.hpp"

namespace versa::detail {

class TaskPool {
 public:
  explicit TaskPool(int workers);
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Returns uninitialised storage for one Task. `worker` is the caller's worker index, or -1.
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
  // The first slab is small and comes from the C++ heap: a short-lived runtime (or one created
  // after another) reuses memory the heap already has, with no page faults. Later slabs, needed
  // only when many tasks are pending at once, are 2 MiB and offered to the kernel as one
  // transparent huge page: one page fault per 2 MiB instead of one every 14 tasks, which on
  // virtual machines costs more than the tasks themselves.
  static constexpr std::size_t first_slab_slots = 1024;
  static constexpr std::size_t slab_bytes = std::size_t{2} << 20;
  static constexpr std::size_t slab_slots = slab_bytes / sizeof(Slot);
  struct Slab {
    Slab(void* memory_, std::size_t mapped_bytes_) : memory(memory_), mapped_bytes(mapped_bytes_) {}
    Slab(Slab&& other) noexcept
        : memory(std::exchange(other.memory, nullptr)), mapped_bytes(other.mapped_bytes) {}
    Slab& operator=(Slab&&) = delete;
    ~Slab();
    void* memory;
    std::size_t mapped_bytes;  // 0: allocated with new[]
  };
  static void* map_huge_slab();

  void refill(Cache& cache);
  void spill(Cache& cache);

  const std::uint64_t id_;  // tags the thread-local caches of non-worker threads
  std::vector<Cache> worker_caches_;  // each owned by its worker thread

  mutable std::mutex depot_mutex_;
  std::vector<std::vector<void*>> depot_;  // full batches; guarded by depot_mutex_
  std::vector<Slab> slabs_;  // guarded by depot_mutex_
};

}  // namespace versa::detail
