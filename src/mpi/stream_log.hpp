// The fingerprint of a rank's submitted stream after each of its events (a registration, a task,
// a flush, a wait_all or the end), so that two ranks can compare their streams at the same
// position while one of them is still submitting: a rank whose receive waits long asks the
// others (ProgressEngine, "stream probes"), and a rank at or past the asker's position compares
// its own fingerprint there. Equal streams give equal fingerprints at every position; the first
// difference shows at the position of the first event that differs.
//
// The submitting thread appends without a lock (a store and a release store of the count); a
// new chunk of positions, and forgetting the positions every rank has agreed on (after a
// wait_all), take the mutex, which the progress thread holds while it reads.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace versa::mpi::detail {

class StreamLog {
 public:
  // Records `hash`, the fingerprint after one more event. The submitting thread only.
  void append(std::uint64_t hash) {
    const std::uint64_t n = count_.load(std::memory_order_relaxed);
    if (n == end_) grow();
    last_chunk_[n % chunk_size] = hash;
    count_.store(n + 1, std::memory_order_release);
  }
  // Events recorded so far. Any thread.
  std::uint64_t count() const { return count_.load(std::memory_order_acquire); }
  // The fingerprint after `n` events (1 <= n <= count()); false when it was forgotten. Any
  // thread.
  bool fingerprint(std::uint64_t n, std::uint64_t& hash) const {
    versa::detail::MutexLock lock(mutex_);
    if (n == 0 || n > count() || n <= first_kept_) return false;
    const std::uint64_t index = n - 1;
    hash = chunks_[(index - chunk_base_) / chunk_size][index % chunk_size];
    return true;
  }
  // Forgets the positions before the last one (every rank agreed on them). The submitting
  // thread only.
  void forget_agreed() {
    versa::detail::MutexLock lock(mutex_);
    const std::uint64_t n = count_.load(std::memory_order_relaxed);
    if (n == 0) return;
    first_kept_ = n - 1;
    while ((first_kept_ - chunk_base_) / chunk_size > 0) {
      chunks_.pop_front();
      chunk_base_ += chunk_size;
    }
  }

 private:
  static constexpr std::uint64_t chunk_size = 4096;

  void grow() {
    versa::detail::MutexLock lock(mutex_);
    chunks_.push_back(std::make_unique<std::uint64_t[]>(chunk_size));
    last_chunk_ = chunks_.back().get();
    end_ += chunk_size;
  }

  mutable versa::detail::Mutex mutex_;
  // Positions [chunk_base_, end_) in chunks of chunk_size; the deque changes under mutex_, the
  // entries of the last chunk are written by the submitting thread before count_ says so.
  std::deque<std::unique_ptr<std::uint64_t[]>> chunks_ VERSA_GUARDED_BY(mutex_);
  std::uint64_t chunk_base_ VERSA_GUARDED_BY(mutex_) = 0;
  std::uint64_t first_kept_ VERSA_GUARDED_BY(mutex_) = 0;  // positions <= this are forgotten
  std::uint64_t* last_chunk_ = nullptr;                    // the submitting thread's
  std::uint64_t end_ = 0;  // the submitting thread's: positions with a slot
  std::atomic<std::uint64_t> count_{0};
};

}  // namespace versa::mpi::detail
