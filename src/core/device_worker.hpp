// The worker thread of one accelerator (DESIGN section 2): takes the tasks placed on the device,
// reserves their buffers, has their inputs copied in and launches them, with several tasks in
// flight on several streams so that the next tasks' inputs arrive while a kernel runs. It also
// receives every completion of the device's operations (copies, kernels) as a message and
// handles it on its own thread, so the runtime never runs inside a device callback.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "core/trace.hpp"
#include "device/body_lane.hpp"
#include "device/device.hpp"

namespace versa::detail {

class DataMover;
class Task;

// What the device worker needs from the runtime.
class DeviceTaskHost {
 public:
  // Finishes `task` as cancelled when an input was left unusable by a failed task; returns
  // whether it did.
  virtual bool cancel_if_poisoned(Task& task) = 0;
  // Acquires `task`'s data on its node (task.node); calls DeviceWorker::launch when all of it
  // is there, or posts the failure to the worker.
  virtual void stage(Task& task) = 0;
  // `task` has run on `node` (or failed to): record, finish or fail it.
  virtual void device_task_ended(Task& task, int node, OperationResult result) = 0;
  // `task` cannot run on `node` (`why`): run it elsewhere or fail it.
  virtual void device_refused(Task& task, int node, const std::string& why) = 0;
  // A task waiting for placement that suits `node`, or null; with `resident_only`, one whose
  // inputs are all valid there.
  virtual Task* pull_for_device(int node, bool resident_only) = 0;
  // Whether a task `task` descends from runs on `node` (and so waits for it there).
  virtual bool has_ancestor_on(const Task& task, int node) const = 0;

 protected:
  ~DeviceTaskHost() = default;
};

// The worker's thread is the lane of the bodies that run at launch (the host code of CUDA
// tasks): one that waits for its children runs the worker's steps meanwhile.
class DeviceWorker final : public BodyLane {
 public:
  // Keeps up to `tasks_per_stream` tasks launched per kernel stream
  // (Config::device_tasks_per_stream), runs the tasks of `serial_types` one after another
  // (Config::device_serial_types); records its reservations and launches in `trace`.
  DeviceWorker(int node, Device& device, DataMover& mover, DeviceTaskHost& host,
               int tasks_per_stream, std::vector<std::string> serial_types, TraceRecorder& trace);
  // Stops the thread; every task pushed must have ended.
  ~DeviceWorker();
  // The same, earlier: a worker reads the others' backlogs while pulling work, so every worker
  // stops before any is destroyed.
  void stop();
  DeviceWorker(const DeviceWorker&) = delete;
  DeviceWorker& operator=(const DeviceWorker&) = delete;

  Device& device() { return device_; }

  // Queues a ready task placed on this device. Any thread.
  void push(Task* task);
  // Runs `message` on the worker thread. Any thread, including device callbacks.
  void post(std::function<void()> message);
  // Starts `task`, whose data is staged on this device, on a stream with a free slot, or when one
  // frees. Any thread.
  void launch(Task* task);
  // Reports that staging `task` failed; it ends with `error`. Any thread.
  void staging_failed(Task* task, std::string error);
  // Tells the worker that work may be had from DeviceTaskHost::pull_for_device. Any thread.
  void notify_work();
  // A body of a task in flight here starts (`waiting`) or stops waiting for its children: while
  // it waits, it does not count against the tasks this device keeps in flight, so that its
  // children may start here even when every task in flight waits. Any thread.
  void body_waiting(bool waiting);

  // BodyLane: one step of the worker's loop, on its own thread.
  bool help(std::chrono::microseconds wait) override;

  // Expected execution time of the tasks queued and in flight here (placement's backlog).
  std::int64_t backlog_ns() const { return backlog_ns_.load(std::memory_order_relaxed); }
  // Tasks pushed here and not yet ended.
  std::int64_t queued_tasks() const { return queued_tasks_.load(std::memory_order_relaxed); }

 private:
  void loop();
  // Handles the messages posted so far and starts what there is room for; returns whether it
  // did anything. Re-entrant: a body started here may wait in help(), which steps again.
  bool step();
  bool has_work() const VERSA_REQUIRES(mutex_);
  // Tasks in flight that hold the device: those whose bodies wait for their children do not.
  int busy() const {
    return in_flight_ - waiting_bodies_.load(std::memory_order_relaxed) +
           static_cast<int>(deferred_.size());
  }
  // Tasks that wait for memory or for their copies.
  int waiting_for_data() const {
    return staging_.load(std::memory_order_relaxed) + static_cast<int>(deferred_.size());
  }
  bool within_budget() const { return busy() <= 0 || in_flight_bytes_ < prefetch_budget_; }
  // Moves the queued tasks that may start now from the queue to `starting`; returns whether it
  // marked the queue looked over (ready_looked_over_) counting those as started.
  bool take_ready(std::vector<Task*>& starting);
  // Removes the queue's first task (by priority, then submission) and returns it.
  Task* pop_first() VERSA_REQUIRES(mutex_);
  void start(Task* task);
  // Launches `task` on stream_for(task).
  void execute(Task* task);
  // The start of a span record() takes: read only when tracing.
  TraceRecorder::Clock::time_point trace_started() const;
  // Records on the trace's worker track that this thread spent from `start` to now on `what`
  // for `task`.
  void record(TraceRecorder::Clock::time_point start, const char* what, std::string_view task);
  // Launches the first task of launchable_ that a stream has room for; returns whether there was
  // one.
  bool launch_waiting();
  // The first of the streams `task` may run on and their number.
  std::pair<int, int> streams_of(const Task& task) const;
  // Whether one of those has fewer than tasks_per_stream_ tasks launched.
  bool stream_free(const Task& task) const;
  // The stream `task` is launched on; counts it there until ended().
  int stream_for(const Task& task);
  void ended(Task* task, OperationResult result);
  void leave(std::int64_t expected_ns);
  bool idle() const VERSA_REQUIRES(mutex_);
  bool has_room(int starting = 0) const;
  bool has_room_launched(int starting = 0) const;
  void room_made();
  // Something happened that may let a queued task start: a task pushed, a message posted, room
  // made. Clears ready_looked_over_.
  void changed() VERSA_REQUIRES(mutex_);

  const int node_;
  Device& device_;
  DataMover& mover_;
  DeviceTaskHost& host_;
  TraceRecorder& trace_;
  // Tasks in flight that wait for copies, and (apart) those launched, at most: a task whose data
  // is all here need not wait behind a window full of tasks waiting for copies.
  const int max_copying_;
  const int max_launched_;
  const int tasks_per_stream_;
  // Config::device_serial_types: their tasks take stream 0 alone, the others the other streams.
  const std::vector<std::string> serial_types_;
  // How many of the queue's first tasks one step looks over for one that can start.
  static constexpr std::size_t looked_over_at_most = 256;
  // Bytes of data the tasks in flight may hold on the device: prefetching further ahead would
  // only evict what the running tasks need.
  const std::size_t prefetch_budget_;

  Mutex mutex_;
  std::condition_variable wake_;
  std::vector<Task*> ready_ VERSA_GUARDED_BY(mutex_);  // a heap by priority
  std::uint64_t pushed_ VERSA_GUARDED_BY(mutex_) = 0;  // FIFO among equals
  std::vector<std::function<void()>> messages_ VERSA_GUARDED_BY(mutex_);
  bool stopping_ VERSA_GUARDED_BY(mutex_) = false;
  bool work_offered_ VERSA_GUARDED_BY(mutex_) = false;  // notify_work() was called
  // The last look over the queue found no task to start, and nothing changed since (changed()):
  // until something does, the queue gives no work.
  bool ready_looked_over_ VERSA_GUARDED_BY(mutex_) = false;
  std::uint64_t changes_ VERSA_GUARDED_BY(mutex_) = 0;
  // Owned by the worker thread (read under mutex_ by the wait predicate).
  int in_flight_ = 0;
  std::size_t in_flight_bytes_ = 0;
  std::vector<Task*> deferred_;  // could not reserve memory yet; retried after completions
  int next_stream_ = 0;
  // Per stream (the kernel streams, then the high-priority ones): the tasks launched there and
  // not ended. The worker's thread only.
  std::vector<int> on_stream_;
  // Tasks whose data is here, waiting for a stream with room, in the order they run (by priority,
  // then as their data arrived). The worker's thread only.
  std::vector<Task*> launchable_;

  std::atomic<int> waiting_bodies_{0};  // bodies of tasks in flight that wait (body_waiting)
  // Tasks started and not yet launched (their copies are under way): launch() runs on other
  // threads too.
  std::atomic<int> staging_{0};
  std::atomic<std::int64_t> backlog_ns_{0};
  std::atomic<std::int64_t> queued_tasks_{0};
  std::thread thread_;  // last: starts after everything above is initialised
};

}  // namespace versa::detail
