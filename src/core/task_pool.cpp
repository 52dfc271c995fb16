#include "core/task_pool.hpp"

namespace versa::detail {

TaskPool::TaskPool(int workers) : worker_caches_(workers) {}

TaskPool::~TaskPool() = default;

void* TaskPool::allocate(int worker) {
  if (worker >= 0) {
    Cache& cache = worker_caches_[worker];
    if (cache.free.empty()) refill(cache);
    void* slot = cache.free.back();
    cache.free.pop_back();
    return slot;
  }
  SpinGuard guard(external_lock_);
  if (external_cache_.free.empty()) refill(external_cache_);
  void* slot = external_cache_.free.back();
  external_cache_.free.pop_back();
  return slot;
}

void TaskPool::release(void* slot, int worker) {
  if (worker >= 0) {
    Cache& cache = worker_caches_[worker];
    cache.free.push_back(slot);
    if (cache.free.size() >= 2 * batch) spill(cache);
    return;
  }
  SpinGuard guard(external_lock_);
  external_cache_.free.push_back(slot);
  if (external_cache_.free.size() >= 2 * batch) spill(external_cache_);
}

void TaskPool::refill(Cache& cache) {
  std::lock_guard<std::mutex> guard(depot_mutex_);
  if (!depot_.empty()) {
    std::vector<void*> full = std::move(depot_.back());
    depot_.pop_back();
    cache.free.insert(cache.free.end(), full.begin(), full.end());
    return;
  }
  slabs_.push_back(std::make_unique<Slot[]>(slab_slots));
  Slot* slab = slabs_.back().get();
  cache.free.reserve(cache.free.size() + slab_slots);
  for (std::size_t i = slab_slots; i-- > 0;) cache.free.push_back(&slab[i]);
}

void TaskPool::spill(Cache& cache) {
  std::vector<void*> full(cache.free.end() - batch, cache.free.end());
  cache.free.resize(cache.free.size() - batch);
  std::lock_guard<std::mutex> guard(depot_mutex_);
  depot_.push_back(std::move(full));
}

std::size_t TaskPool::bytes_reserved() const {
  std::lock_guard<std::mutex> guard(depot_mutex_);
  return slabs_.size() * slab_slots * sizeof(Slot);
}

}  // namespace versa::detail
