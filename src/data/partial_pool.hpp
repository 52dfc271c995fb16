// Memory for the partial buffers of reductions (DESIGN section 4): the budget that bounds the
// partials alive at once on all nodes, the pool of host buffers reused from one run of adds to
// the next, and the handles whose partials wait for their flush.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <unordered_set>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class HandleState;

class PartialPool {
 public:
  explicit PartialPool(std::size_t budget) : budget_(budget) {}
  ~PartialPool() { trim(); }
  PartialPool(const PartialPool&) = delete;
  PartialPool& operator=(const PartialPool&) = delete;

  // Counts a partial of `bytes` against the budget; false (and nothing counted) past it.
  bool try_reserve(std::size_t bytes) {
    std::size_t used = reserved_.load(std::memory_order_relaxed);
    do {
      if (used + bytes > budget_) return false;
    } while (!reserved_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
    return true;
  }
  void release(std::size_t bytes) { reserved_.fetch_sub(bytes, std::memory_order_relaxed); }

  // A host buffer of `bytes`: a pooled one of that size, else a new one.
  void* take(std::size_t bytes);
  void give(void* buffer, std::size_t bytes);
  // Frees the pooled buffers.
  void trim();

  // Bytes of host buffers allocated (in use or pooled), and of partials on devices.
  std::size_t host_bytes() const { return host_bytes_.load(std::memory_order_relaxed); }
  std::atomic<std::size_t>& device_bytes() { return device_bytes_; }

  // Handles with partials that no flush has applied yet (wait_all flushes them).
  void list(HandleState* handle);
  void unlist(HandleState* handle);
  std::vector<HandleState*> listed();

 private:
  const std::size_t budget_;
  std::atomic<std::size_t> reserved_{0};
  std::atomic<std::size_t> host_bytes_{0};
  std::atomic<std::size_t> device_bytes_{0};
  Mutex mutex_;
  std::multimap<std::size_t, void*> free_ VERSA_GUARDED_BY(mutex_);
  std::unordered_set<HandleState*> listed_ VERSA_GUARDED_BY(mutex_);
};

}  // namespace versa::detail
