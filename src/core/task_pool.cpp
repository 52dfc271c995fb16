#include "core/task_pool.hpp"

#include <atomic>
#include <new>

namespace versa::detail {

namespace {
std::atomic<std::uint64_t> next_pool_id{1};
}  // namespace

// The first slab is carved before any task exists: the first submission would otherwise pay for
// it (10 us, more than a short chain of small tasks takes). Its pages are written now too: the
// heap hands the first runtimes of a process fresh pages, and a first-touch fault (about 1.7 us
// on the virtual machines measured) every dozen tasks slowed their first phase by up to 3%.
TaskPool::TaskPool(int workers) : id_(next_pool_id.fetch_add(1)), worker_caches_(workers) {
  MutexLock guard(depot_mutex_);
  carve_slab();
  constexpr std::size_t page = 4096;
  auto* const bytes = reinterpret_cast<volatile std::byte*>(slabs_.back().get());
  for (std::size_t at = 0; at < slab_slots * sizeof(Slot); at += page) bytes[at] = std::byte{0};
}

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

void TaskPool::refill(Cache& cache) {
  MutexLock guard(depot_mutex_);
  if (depot_.empty()) carve_slab();
  std::vector<void*> full = std::move(depot_.back());
  depot_.pop_back();
  cache.free.insert(cache.free.end(), full.begin(), full.end());
}

void TaskPool::carve_slab() {
  // Default-initialised: the slots are constructed as tasks when used, so nothing is zeroed.
  slabs_.push_back(std::unique_ptr<Slot[]>(new Slot[slab_slots]));
  Slot* slab = slabs_.back().get();
  for (std::size_t first = 0; first + batch <= slab_slots; first += batch) {
    std::vector<void*>& full = depot_.emplace_back();
    full.reserve(batch);
    for (std::size_t i = first + batch; i-- > first;) full.push_back(&slab[i]);
  }
}

void TaskPool::spill(Cache& cache) {
  std::vector<void*> full(cache.free.end() - batch, cache.free.end());
  cache.free.resize(cache.free.size() - batch);
  MutexLock guard(depot_mutex_);
  depot_.push_back(std::move(full));
}

std::size_t TaskPool::bytes_reserved() const {
  MutexLock guard(depot_mutex_);
  return slabs_.size() * slab_slots * sizeof(Slot);
}

}  // namespace versa::detail
