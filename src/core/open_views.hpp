// The views from Runtime::acquire that are open, each with the thread that opened it. A thread
// that holds a view and then waits for work that waits for the view would wait for itself:
// RuntimeCore looks here before wait_all and acquire, and refuses such a wait.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "base/mutex.hpp"
#include "base/task.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class OpenViews {
 public:
  struct View {
    Task* ticket;                   // the host access; its access 0 is the view's
    std::uint64_t registered_then;  // accesses registered on its instance just after it
  };

  void opened(Task* ticket, std::uint64_t registered_then) {
    MutexLock guard(mutex_);
    views_.push_back({{ticket, registered_then}, std::this_thread::get_id()});
    count_.store(views_.size(), std::memory_order_release);
  }

  // Forgets `ticket` (nothing when it was never opened: an acquire that failed).
  void closed(const Task* ticket) {
    if (count_.load(std::memory_order_acquire) == 0) return;
    MutexLock guard(mutex_);
    std::erase_if(views_, [ticket](const Entry& e) { return e.view.ticket == ticket; });
    count_.store(views_.size(), std::memory_order_release);
  }

  // Whether a view is open: one load, which wait_all makes every time.
  bool any() const { return count_.load(std::memory_order_acquire) != 0; }

  // Calls `visit(const View&)` for each view the calling thread opened and has not released,
  // holding the lock: a view moved to another thread cannot be released meanwhile. `visit`
  // may take handles' locks, and throw.
  template <class Visit>
  void for_each_of_this_thread(Visit&& visit) {
    const std::thread::id self = std::this_thread::get_id();
    MutexLock guard(mutex_);
    for (const Entry& e : views_)
      if (e.opener == self) visit(e.view);
  }

 private:
  struct Entry {
    View view;
    std::thread::id opener;
  };
  Mutex mutex_;
  std::vector<Entry> views_ VERSA_GUARDED_BY(mutex_);
  std::atomic<std::size_t> count_{0};  // views_.size()
};

}  // namespace versa::detail
