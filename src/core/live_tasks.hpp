// The tasks with accesses that are submitted and not yet finished, so that the diagnostics can
// say who holds a handle (Runtime::describe_pending, the stall report). Kept only when tracking
// is on (Config::track_tasks), except the tickets of host accesses (Runtime::acquire), which
// are rare and always kept: a forgotten host view is the commonest stall.
//
// Reading another thread's task is safe because a task leaves the set, under its shard's lock,
// before it is destroyed: whoever holds the locks (for_each) may read what a listed task was
// given before it was added and never changes after (name, kind, accesses' handles and modes,
// required versions). Where a task is placed on a device, which the task's own fields hold
// without synchronisation, is copied into its entry by the dispatch instead.
#pragma once

#include <array>
#include <cstddef>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/mutex.hpp"
#include "base/task.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class LiveTasks {
 public:
  // What the dispatch said of a task: the device node it was handed to (0: none yet), and
  // whether its data was there and it was launched (otherwise it waits for device memory or
  // for its input copies).
  struct Placement {
    int node = 0;
    bool launched = false;
  };

  void add(const Task* task);
  void remove(const Task* task);
  // Records that `task` (listed or not) was handed to device `node`.
  void placed(const Task* task, int node, bool launched);

  // Runs `body()` holding every lock: no listed task can finish meanwhile (a finishing task
  // waits at its removal), so `body` may read the immutable fields of the tasks listed() gives
  // and may take handles' and workers' locks (nobody takes these locks while holding those),
  // but must not call back in here.
  template <class Body>
  void while_locked(Body&& body) {
    AllLocked locked(*this);
    body();
  }
  // The tasks listed, with where the dispatch placed them. Only inside while_locked().
  std::vector<std::pair<const Task*, Placement>> listed();
  // Whether a host access is waiting for its data (its ticket listed and not yet ready): work
  // pending that the scheduler's count does not include.
  bool host_access_waiting();

 private:
  // Tasks are spread over shards by address, so that workers finishing tasks seldom meet at
  // one lock (and ThreadSanitizer sees few orderings that the scheduler itself does not make).
  static constexpr std::size_t shard_count = 16;
  struct alignas(64) Shard {
    Mutex mutex;
    std::unordered_map<const Task*, Placement> tasks VERSA_GUARDED_BY(mutex);
  };
  Shard& shard_of(const Task* task);
  // Holds every shard's lock (which the analysis cannot follow over an array).
  class AllLocked {
   public:
    explicit AllLocked(LiveTasks& tasks) VERSA_NO_THREAD_SAFETY_ANALYSIS : tasks_(tasks) {
      for (Shard& shard : tasks_.shards_) shard.mutex.lock();
    }
    ~AllLocked() VERSA_NO_THREAD_SAFETY_ANALYSIS {
      for (Shard& shard : tasks_.shards_) shard.mutex.unlock();
    }
    AllLocked(const AllLocked&) = delete;
    AllLocked& operator=(const AllLocked&) = delete;

   private:
    LiveTasks& tasks_;
  };

  std::array<Shard, shard_count> shards_;
};

}  // namespace versa::detail
