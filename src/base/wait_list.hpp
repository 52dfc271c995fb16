// Intrusive list of the tasks parked at a handle, ordered by the version they wait for.
//
// A task is parked at one handle at a time, so one pair of links per task suffices and parking
// never allocates. Tasks usually arrive in submission order, i.e. in increasing required
// version, so insertion scans from the tail and is O(1) in the common case; waking pops from the
// head while the head's version is available. Together these keep the cost per task flat however
// many tasks wait at one handle (the "generations" benchmark). A task that parked at another
// handle first arrives late, behind tasks submitted after it: its version is nearer the head's
// than the tail's, and it is placed from the head.
#pragma once

#include <cstdint>

namespace versa::detail {

// Links of a parked task. Every field is written when the task parks, so none needs
// initialising before (which keeps task creation to the cache lines it really uses).
struct Waiter {
  Waiter* wait_prev;
  Waiter* wait_next;
  std::uint64_t wait_version;  // the version of the handle this waiter needs
  void* owner;                 // the parked task
};

// Not thread-safe: the owning handle's lock protects it.
class WaitList {
 public:
  bool empty() const { return head_ == nullptr; }

  // After the waiters of its version or lower, before those of higher ones; scanning from the
  // end whose version is nearer.
  void insert(Waiter* w) {
    const std::uint64_t v = w->wait_version;
    Waiter* after = tail_;
    if (head_ && v < tail_->wait_version &&
        (v < head_->wait_version || v - head_->wait_version < tail_->wait_version - v)) {
      after = nullptr;  // from the head: after every waiter of version v or lower
      for (Waiter* next = head_; next && next->wait_version <= v; next = next->wait_next)
        after = next;
    } else {
      while (after && after->wait_version > v) after = after->wait_prev;
    }
    w->wait_prev = after;
    w->wait_next = after ? after->wait_next : head_;
    (w->wait_next ? w->wait_next->wait_prev : tail_) = w;
    (after ? after->wait_next : head_) = w;
  }

  // Appends at the tail regardless of version (FIFO use: exclusive-access waiters).
  void push_back(Waiter* w) {
    w->wait_version = tail_ ? tail_->wait_version : 0;
    w->wait_prev = tail_;
    w->wait_next = nullptr;
    (tail_ ? tail_->wait_next : head_) = w;
    tail_ = w;
  }

  // Removes and returns the head if its version is at most `available`, else nullptr.
  Waiter* pop_ready(std::uint64_t available) {
    Waiter* w = head_;
    if (!w || w->wait_version > available) return nullptr;
    head_ = w->wait_next;
    (head_ ? head_->wait_prev : tail_) = nullptr;
    w->wait_next = w->wait_prev = nullptr;
    return w;
  }

  // Calls `visit(const Waiter&)` for each waiter, head first, without changing the list: what
  // the diagnostics show (Runtime::describe_pending). Under the owning lock, like the rest.
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (const Waiter* w = head_; w; w = w->wait_next) visit(*w);
  }

 private:
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
};

// Goes on with a task whose waiter a handle released: its next check, or the ready queue
// (implemented by the scheduler; `worker` is the calling worker, or -1 for other threads).
class Waker {
 public:
  virtual void wake(Waiter* waiter, int worker) = 0;

 protected:
  ~Waker() = default;
};

}  // namespace versa::detail
