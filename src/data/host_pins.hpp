// The host memory ranges a runtime page-locked (pinned) for faster copies to GPUs. Shared by the
// runtime with the handles and PinnedHostMemory objects that pinned a range, so that each can
// unpin its range whether the runtime still exists or not: when the runtime goes, it closes the
// set (unpinning everything) and later unpins do nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class HostPins {
 public:
  using Register = std::function<bool(void*, std::size_t)>;
  using Unregister = std::function<void(void*)>;

  HostPins(Register pin, Unregister unpin)
      : register_(std::move(pin)), unregister_(std::move(unpin)) {}

  // Pins [data, data + bytes) unless it overlaps a range pinned already (CUDA refuses those) or
  // the device refuses. Returns whether it pinned.
  bool pin(const void* data, std::size_t bytes) {
    const auto begin = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t end = begin + bytes;
    MutexLock guard(mutex_);
    if (closed_ || !data || bytes == 0) return false;
    auto after = ranges_.upper_bound(begin);
    if (after != ranges_.begin() && std::prev(after)->second > begin) return false;
    if (after != ranges_.end() && after->first < end) return false;
    if (!register_(const_cast<void*>(data), bytes)) return false;
    ranges_.emplace(begin, end);
    return true;
  }

  // Unpins the range pinned at `data` (nothing once closed).
  void unpin(const void* data) {
    MutexLock guard(mutex_);
    if (!closed_ && ranges_.erase(reinterpret_cast<std::uintptr_t>(data)) != 0)
      unregister_(const_cast<void*>(data));
  }

  // Unpins every range; the device goes away after this.
  void close() {
    MutexLock guard(mutex_);
    for (const auto& [begin, end] : ranges_) unregister_(reinterpret_cast<void*>(begin));
    ranges_.clear();
    closed_ = true;
  }

 private:
  const Register register_;
  const Unregister unregister_;
  Mutex mutex_;
  std::map<std::uintptr_t, std::uintptr_t> ranges_ VERSA_GUARDED_BY(mutex_);  // begin -> end
  bool closed_ VERSA_GUARDED_BY(mutex_) = false;
};

}  // namespace versa::detail
