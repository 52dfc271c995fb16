// A mutex and its scoped lock that Clang's thread-safety analysis can follow. libstdc++ does not
// annotate std::mutex as a capability, so a member guarded by one cannot be checked: these thin
// wrappers add the annotations and nothing else (same size, same cost as the std types).
//
// MutexLock holds a std::unique_lock so that it can wait on a std::condition_variable, which is
// cheaper than std::condition_variable_any on the hot paths that wait:
//   MutexLock lock(mutex_);
//   wake_.wait(lock.native(), [&]() VERSA_REQUIRES(mutex_) { return !queue_.empty(); });
// The analysis does not see that wait() releases the mutex while it sleeps; it is held again
// when wait() returns and whenever the predicate runs, which is all the code around it relies
// on. A predicate that reads guarded members says so with VERSA_REQUIRES, as above.
#pragma once

#include <mutex>

#include "base/thread_annotations.hpp"

namespace versa::detail {

class VERSA_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() VERSA_ACQUIRE() { mutex_.lock(); }
  bool try_lock() VERSA_TRY_ACQUIRE(true) { return mutex_.try_lock(); }
  void unlock() VERSA_RELEASE() { mutex_.unlock(); }

 private:
  friend class MutexLock;
  std::mutex mutex_;
};

// Holds a Mutex from construction to destruction, except between unlock() and lock().
class VERSA_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) VERSA_ACQUIRE(mutex) : lock_(mutex.mutex_) {}
  // Takes over `mutex`, which the caller has locked (after a successful try_lock()).
  MutexLock(Mutex& mutex, std::adopt_lock_t) VERSA_REQUIRES(mutex)
      : lock_(mutex.mutex_, std::adopt_lock) {}
  ~MutexLock() VERSA_RELEASE() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Releases the mutex before the end of the scope, and takes it again.
  void unlock() VERSA_RELEASE() { lock_.unlock(); }
  void lock() VERSA_ACQUIRE() { lock_.lock(); }

  // The lock itself, for std::condition_variable::wait.
  std::unique_lock<std::mutex>& native() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

// A mutex that the thread holding it may take again: the host code of a CUDA task that waits for
// its children runs the device's next tasks on its own thread meanwhile, and those may queue on
// the stream whose lock the waiting task holds.
class VERSA_CAPABILITY("mutex") RecursiveMutex {
 public:
  RecursiveMutex() = default;
  RecursiveMutex(const RecursiveMutex&) = delete;
  RecursiveMutex& operator=(const RecursiveMutex&) = delete;

  void lock() VERSA_ACQUIRE() { mutex_.lock(); }
  void unlock() VERSA_RELEASE() { mutex_.unlock(); }

 private:
  std::recursive_mutex mutex_;
};

// Holds a RecursiveMutex from construction to destruction.
class VERSA_SCOPED_CAPABILITY RecursiveMutexLock {
 public:
  explicit RecursiveMutexLock(RecursiveMutex& mutex) VERSA_ACQUIRE(mutex) : mutex_(mutex) {
    mutex_.lock();
  }
  ~RecursiveMutexLock() VERSA_RELEASE() { mutex_.unlock(); }
  RecursiveMutexLock(const RecursiveMutexLock&) = delete;
  RecursiveMutexLock& operator=(const RecursiveMutexLock&) = delete;

 private:
  RecursiveMutex& mutex_;
};

}  // namespace versa::detail
