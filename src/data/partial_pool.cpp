#include "data/partial_pool.hpp"

#include <new>

namespace versa::detail {

namespace {
// Partials are the targets of vectorised loops and device copies.
constexpr std::align_val_t partial_alignment{64};
}  // namespace

void* PartialPool::take(std::size_t bytes) {
  {
    MutexLock guard(mutex_);
    auto pooled = free_.find(bytes);
    if (pooled != free_.end()) {
      void* buffer = pooled->second;
      free_.erase(pooled);
      return buffer;
    }
  }
  void* buffer = ::operator new(bytes, partial_alignment);
  host_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  return buffer;
}

void PartialPool::give(void* buffer, std::size_t bytes) {
  MutexLock guard(mutex_);
  free_.emplace(bytes, buffer);
}

void PartialPool::trim() {
  MutexLock guard(mutex_);
  for (auto& [bytes, buffer] : free_) {
    ::operator delete(buffer, partial_alignment);
    host_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
  }
  free_.clear();
}

void PartialPool::list(HandleState* handle) {
  MutexLock guard(mutex_);
  listed_.insert(handle);
}

void PartialPool::unlist(HandleState* handle) {
  MutexLock guard(mutex_);
  listed_.erase(handle);
}

std::vector<HandleState*> PartialPool::listed() {
  MutexLock guard(mutex_);
  return {listed_.begin(), listed_.end()};
}

}  // namespace versa::detail
