// A task body that runs on a device's thread is a task like any other: spawn() inside it makes
// children of the task, sync() waits for them, and the task finishes only after them. A body
// that waits must keep its device going, since its children may be queued behind it there:
// the thread it runs on is a BodyLane (an emulated device's stream thread, a device's worker
// thread, which runs the host code of CUDA tasks), which the waiting body helps by running the
// work queued for that lane. So even when every lane of a device waits, the children run.
#pragma once

#include <chrono>

namespace versa::detail {

class Task;

class BodyLane {
 public:
  // Runs one piece of the work queued for this lane, waiting up to `wait` for some to come;
  // returns whether it ran one. Called only on the lane's own thread, by a body waiting there.
  virtual bool help(std::chrono::microseconds wait) = 0;
  // The body waiting on this lane stops holding what only a running kernel may hold (an
  // emulated device's compute engine), and takes it again before it goes on.
  virtual void pause() {}
  virtual void resume() {}

 protected:
  ~BodyLane() = default;
};

// The lane the calling thread serves, or null on other threads.
BodyLane* current_body_lane();

// Makes `lane` the calling thread's lane for the life of the scope (the lane's own loop).
class BodyLaneScope {
 public:
  explicit BodyLaneScope(BodyLane& lane);
  ~BodyLaneScope();
  BodyLaneScope(const BodyLaneScope&) = delete;
  BodyLaneScope& operator=(const BodyLaneScope&) = delete;

 private:
  BodyLane* enclosing_;
};

// Runs the bodies of device tasks; implemented by the runtime.
class BodyHost {
 public:
  // Runs `body(context)` as the body of `task` on the calling thread: spawn() inside it makes
  // children of `task`, sync() waits for them (current_body_lane() helping meanwhile), and
  // wait_all() or acquire() inside it are refused. Before returning it waits for the task's
  // children (the implicit sync at the end of every body), also when the body throws, which is
  // then rethrown.
  virtual void run_body(Task& task, void (*body)(void*), void* context) = 0;

 protected:
  ~BodyHost() = default;
};

}  // namespace versa::detail
