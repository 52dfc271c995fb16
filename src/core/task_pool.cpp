#include "core/task_pool.hpp"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <new>

namespace versa::detail {

namespace {
std::atomic<std::uint64_t> next_pool_id{1};
}  // namespace

TaskPool::TaskPool(int workers) : id_(next_pool_id.fetch_add(1)), worker_caches_(workers) {}

// A non-worker thread's cache, emptied (without touching its slots) when it last served another
// pool, possibly one destroyed since.
TaskPool::Cache& TaskPool::external_cache() {
  struct Tagged {
    std::uint64_t pool = 0;
    Cache cache;
  };
  thread_local Tagged tagged;
  if (tagged.pool != id_) {
    tagged.cache.free.clear();
    tagged.pool = id_;
  }
  return tagged.cache;
}

TaskPool::~TaskPool() = default;

TaskPool::Slab::~Slab() {
  if (!memory) return;
  if (mapped_bytes) {
    munmap(memory, mapped_bytes);
  } else {
    delete[] static_cast<Slot*>(memory);
  }
}

// Maps slab_bytes aligned to slab_bytes (a huge page must be aligned): maps twice the size and
// unmaps the excess on both sides.
void* TaskPool::map_huge_slab() {
  void* mapped = mmap(nullptr, 2 * slab_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(mapped);
  const std::uintptr_t aligned = (base + slab_bytes - 1) & ~(std::uintptr_t{slab_bytes} - 1);
  if (aligned > base) munmap(mapped, aligned - base);
  const std::uintptr_t end = base + 2 * slab_bytes;
  if (end > aligned + slab_bytes) munmap(reinterpret_cast<void*>(aligned + slab_bytes), end - aligned - slab_bytes);
  void* slab = reinterpret_cast<void*>(aligned);
  madvise(slab, slab_bytes, MADV_HUGEPAGE);  // a hint: without huge pages it still works
  return slab;
}

void* TaskPool::allocate(int worker) {
  Cache& cache = worker >= 0 ? worker_caches_[worker] : external_cache();
  if (cache.free.empty()) refill(cache);
  void* slot = cache.free.back();
  cache.free.pop_back();
  return slot;
}

void TaskPool::release(void* slot, int worker) {
  Cache& cache = worker >= 0 ? worker_caches_[worker] : external_cache();
  cache.free.push_back(slot);
  if (cache.free.size() >= 2 * batch) spill(cache);
}

void TaskPool::refill(Cache& cache) {
  std::lock_guard<std::mutex> guard(depot_mutex_);
  if (!depot_.empty()) {
    std::vector<void*> full = std::move(depot_.back());
    depot_.pop_back();
    cache.free.insert(cache.free.end(), full.begin(), full.end());
    return;
  }
  const bool first = slabs_.empty();
  const std::size_t slots = first ? first_slab_slots : slab_slots;
  Slot* slab;
  if (first) {
    slab = new Slot[slots];  // default-initialised: nothing is zeroed
    slabs_.push_back({slab, 0});
  } else {
    slab = static_cast<Slot*>(map_huge_slab());
    slabs_.push_back({slab, slab_bytes});
  }
  cache.free.reserve(cache.free.size() + slots);
  for (std::size_t i = slots; i-- > 0;) cache.free.push_back(&slab[i]);
}

void TaskPool::spill(Cache& cache) {
  std::vector<void*> full(cache.free.end() - batch, cache.free.end());
  cache.free.resize(cache.free.size() - batch);
  std::lock_guard<std::mutex> guard(depot_mutex_);
  depot_.push_back(std::move(full));
}

std::size_t TaskPool::bytes_reserved() const {
  std::lock_guard<std::mutex> guard(depot_mutex_);
  std::size_t bytes = 0;
  for (const Slab& slab : slabs_) bytes += slab.mapped_bytes ? slab.mapped_bytes : first_slab_slots * sizeof(Slot);
  return bytes;
}

}  // namespace versa::detail
