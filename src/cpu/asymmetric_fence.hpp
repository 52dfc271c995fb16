// A fence split in two unequal halves for the sleep protocol of the workers (worker_pool.hpp):
// every push of a task issues light(), and only a worker about to sleep issues heavy().
//
// The protocol is a Dekker pattern (a pusher stores a task and then reads the sleeper count; a
// sleeper stores the count and then looks for tasks), which needs a full fence on both sides.
// With symmetric fences, every push paid a locked instruction, which waits for the push's stores
// (to lines the workers read) to leave the store buffer. Linux's
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) lets the sleeper run a full fence on every running
// thread of the process instead, so light() only stops the compiler from reordering, as in liburcu
// and folly's asymmetric barriers. Where membarrier is missing (other systems, sandboxes that
// filter it), both halves are full fences. GCC refuses fences under ThreadSanitizer, which models
// neither them nor membarrier: the pool does not use this class there (see
// WorkerPool::sleepers_after_push), and its fences compile to nothing.
#pragma once

#include <atomic>

#include "base/thread_annotations.hpp"

namespace versa::detail {

class AsymmetricFence {
 public:
  // Registers the process for expedited membarrier where the kernel offers it.
  AsymmetricFence();

  // The frequent side: orders this thread's earlier stores before its later loads, given that
  // the other side issues heavy().
  void light() const {
    if (expedited_)
      std::atomic_signal_fence(std::memory_order_seq_cst);
    else
      full_fence();
  }

  // The rare side: a full fence on this thread and on every thread of the process that is
  // running now (a thread that is not running has passed a context switch, itself a fence).
  void heavy() const;

  // Whether light() is free (the test says which kind it checked).
  bool expedited() const { return expedited_; }

 private:
  static void full_fence() {
#if !VERSA_TSAN
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
  }

  bool expedited_ = false;
};

}  // namespace versa::detail
