// The memory of one device node: a caching allocator with a capacity, and the least-recently-
// used order of the replicas that live there.
//
// Buffers are kept for reuse when replicas are dropped (tiles of one size are recycled without
// touching the device allocator); they count against the capacity until trimmed. The LRU list
// holds every resident replica; eviction (core/device_reservations.cpp) walks it from the oldest
// end and skips pinned ones.
#pragma once

#include <cstddef>
#include <functional>
#include <map>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "data/replica.hpp"

namespace versa::detail {

class NodeMemory {
 public:
  using Allocate = std::function<void*(std::size_t)>;
  using Deallocate = std::function<void(void*)>;

  NodeMemory(std::size_t capacity, Allocate allocate, Deallocate deallocate)
      : capacity_(capacity), allocate_(std::move(allocate)), deallocate_(std::move(deallocate)) {}
  ~NodeMemory() { trim(SIZE_MAX); }
  NodeMemory(const NodeMemory&) = delete;
  NodeMemory& operator=(const NodeMemory&) = delete;

  std::size_t capacity() const { return capacity_; }
  Mutex& mutex() VERSA_RETURN_CAPABILITY(mutex_) { return mutex_; }

  // A buffer of `bytes`: a cached one of that size, else a new one if the capacity allows
  // (trimming the cache first when needed). Null when the capacity or the device refuses.
  // `device_refused` tells the two apart.
  void* take(std::size_t bytes, bool& device_refused) VERSA_REQUIRES(mutex_) {
    device_refused = false;
    auto cached = cache_.find(bytes);
    if (cached != cache_.end()) {
      void* buffer = cached->second;
      cache_.erase(cached);
      cached_bytes_ -= bytes;
      return buffer;
    }
    if (used_ + bytes > capacity_) trim(used_ + bytes - capacity_);
    if (used_ + bytes > capacity_) return nullptr;
    void* buffer = allocate_(bytes);
    if (!buffer) {
      device_refused = true;
      return nullptr;
    }
    used_ += bytes;
    return buffer;
  }

  // Returns a buffer of `bytes` to the cache.
  void give(void* buffer, std::size_t bytes) VERSA_REQUIRES(mutex_) {
    cache_.emplace(bytes, buffer);
    cached_bytes_ += bytes;
    ++gives_;
  }
  // Buffers given back so far: tells whether any came back between two looks.
  std::uint64_t gives() const VERSA_REQUIRES(mutex_) { return gives_; }

  // Bytes held (in replicas and in the cache) and bytes in the cache only.
  std::size_t used() const VERSA_REQUIRES(mutex_) { return used_; }
  std::size_t cached() const VERSA_REQUIRES(mutex_) { return cached_bytes_; }

  // --- LRU order of resident replicas ---
  void make_resident(Replica* r) VERSA_REQUIRES(mutex_) {
    r->resident = true;
    link_back(r);
  }
  void touch(Replica* r) VERSA_REQUIRES(mutex_) {
    if (!r->resident) return;
    unlink(r);
    link_back(r);
  }
  void make_absent(Replica* r) VERSA_REQUIRES(mutex_) {
    if (!r->resident) return;
    unlink(r);
    r->resident = false;
  }
  Replica* oldest() const VERSA_REQUIRES(mutex_) { return lru_head_; }

 private:
  // Frees cached buffers until `bytes` are released or the cache is empty.
  void trim(std::size_t bytes) VERSA_REQUIRES(mutex_) {
    std::size_t released = 0;
    while (released < bytes && !cache_.empty()) {
      auto largest = std::prev(cache_.end());
      deallocate_(largest->second);
      released += largest->first;
      used_ -= largest->first;
      cached_bytes_ -= largest->first;
      cache_.erase(largest);
    }
  }
  void link_back(Replica* r) VERSA_REQUIRES(mutex_) {
    r->lru_next = nullptr;
    r->lru_prev = lru_tail_;
    if (lru_tail_) lru_tail_->lru_next = r;
    lru_tail_ = r;
    if (!lru_head_) lru_head_ = r;
  }
  void unlink(Replica* r) VERSA_REQUIRES(mutex_) {
    (r->lru_prev ? r->lru_prev->lru_next : lru_head_) = r->lru_next;
    (r->lru_next ? r->lru_next->lru_prev : lru_tail_) = r->lru_prev;
    r->lru_prev = r->lru_next = nullptr;
  }

  const std::size_t capacity_;
  const Allocate allocate_;
  const Deallocate deallocate_;

  Mutex mutex_;
  std::size_t used_ VERSA_GUARDED_BY(mutex_) = 0;
  std::size_t cached_bytes_ VERSA_GUARDED_BY(mutex_) = 0;
  std::uint64_t gives_ VERSA_GUARDED_BY(mutex_) = 0;
  std::multimap<std::size_t, void*> cache_ VERSA_GUARDED_BY(mutex_);  // size -> free buffer
  Replica* lru_head_ VERSA_GUARDED_BY(mutex_) = nullptr;              // least recently used
  Replica* lru_tail_ VERSA_GUARDED_BY(mutex_) = nullptr;
};

}  // namespace versa::detail
