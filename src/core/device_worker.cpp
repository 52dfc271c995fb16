#include "core/device_worker.hpp"

#include <algorithm>

#include "base/assert.hpp"
#include "base/task.hpp"
#include "core/data_mover.hpp"
#include "core/placement.hpp"

namespace versa::detail {

namespace {
// Task::stream of a task started and not launched: its stream is chosen at launch.
constexpr int no_stream = -1;

// Heap order: higher priority first, then earlier submission. The submission number is kept in
// Task::stream until the task starts (it is assigned a real stream at launch).
bool runs_later(const Task* a, const Task* b) {
  if (a->priority != b->priority) return a->priority < b->priority;
  return a->stream > b->stream;
}
}  // namespace

DeviceWorker::DeviceWorker(int node, Device& device, DataMover& mover, DeviceTaskHost& host,
                           int tasks_per_stream, std::vector<std::string> serial_types,
                           TraceRecorder& trace)
    : node_(node),
      device_(device),
      mover_(mover),
      host_(host),
      trace_(trace),
      // Two per stream having their inputs copied in, so that a stream's next task has its data
      // when the one before it ends.
      max_copying_(2 * device.streams()),
      max_launched_(tasks_per_stream * device.streams()),
      tasks_per_stream_(tasks_per_stream),
      serial_types_(std::move(serial_types)),
      prefetch_budget_(device.memory_capacity() / 2),
      on_stream_(static_cast<std::size_t>(device.streams() + device.priority_streams()), 0),
      thread_([this] { loop(); }) {}

DeviceWorker::~DeviceWorker() { stop(); }

void DeviceWorker::stop() {
  if (!thread_.joinable()) return;
  {
    MutexLock guard(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void DeviceWorker::push(Task* task) {
  backlog_ns_.fetch_add(task->expected_ns, std::memory_order_relaxed);
  queued_tasks_.fetch_add(1, std::memory_order_relaxed);
  MutexLock guard(mutex_);
  changed();
  task->stream = static_cast<int>(pushed_++);
  ready_.push_back(task);
  std::push_heap(ready_.begin(), ready_.end(), runs_later);
  wake_.notify_one();
}

// Notifies under the lock: the message may be the last one before the runtime is destroyed,
// and the worker must not be able to finish it while this thread still touches wake_.
void DeviceWorker::post(std::function<void()> message) {
  MutexLock guard(mutex_);
  changed();
  messages_.push_back(std::move(message));
  wake_.notify_one();
}

// Launches run on this worker's thread, which owns the streams' counts (and is the lane of the
// bodies that run at launch, which help it when they wait for their children): a launch from
// another thread (the completion of a copy handled by another device's worker) is handed over.
void DeviceWorker::launch(Task* task) {
  if (current_body_lane() != this) {
    post([this, task] { launch(task); });
    return;
  }
  staging_.fetch_sub(1, std::memory_order_relaxed);
  room_made();
  if (stream_free(*task)) {
    execute(task);
  } else {
    launchable_.insert(
        std::upper_bound(launchable_.begin(), launchable_.end(), task,
                         [](const Task* a, const Task* b) { return runs_later(b, a); }),
        task);
  }
}

void DeviceWorker::execute(Task* task) {
  task->stream = stream_for(*task);
  const auto start = trace_started();
  // Named before the launch: the task may end, and be recycled, before it returns.
  const std::string name = trace_.enabled() && task->name ? task->name : "";
  device_.execute(task->stream, *task, [this, task](OperationResult result) {
    post([this, task, result = std::move(result)]() mutable { ended(task, std::move(result)); });
  });
  record(start, "launch", name);
}

// Now when tracing, else nothing: a task's launch and reservation need no clock otherwise.
TraceRecorder::Clock::time_point DeviceWorker::trace_started() const {
  return trace_.enabled() ? TraceRecorder::Clock::now() : TraceRecorder::Clock::time_point{};
}

void DeviceWorker::record(TraceRecorder::Clock::time_point start, const char* what,
                          std::string_view task) {
  if (!trace_.enabled()) return;
  const std::chrono::duration<double> seconds = TraceRecorder::Clock::now() - start;
  trace_.record_device(node_, TraceRecorder::DeviceTrack::worker, what, seconds.count(), 0, task);
}

// The first of the tasks waiting for a stream (by priority) whose kind of stream has one free.
bool DeviceWorker::launch_waiting() {
  for (std::size_t i = 0; i < launchable_.size(); ++i) {
    Task* const task = launchable_[i];
    if (!stream_free(*task)) continue;
    launchable_.erase(launchable_.begin() + static_cast<std::ptrdiff_t>(i));
    execute(task);
    return true;
  }
  return false;
}

void DeviceWorker::staging_failed(Task* task, std::string error) {
  staging_.fetch_sub(1, std::memory_order_relaxed);  // the message wakes the worker
  post([this, task, error = std::move(error)] {
    OperationResult result;
    result.error = error;
    ended(task, std::move(result));
  });
}

// A task stopped waiting for copies: the queue may have a task that can start now.
void DeviceWorker::room_made() {
  MutexLock guard(mutex_);
  const bool looked_over = ready_looked_over_;
  changed();
  if (looked_over) wake_.notify_one();
}

void DeviceWorker::changed() {
  ++changes_;
  ready_looked_over_ = false;
}

void DeviceWorker::notify_work() {
  MutexLock guard(mutex_);
  work_offered_ = true;
  wake_.notify_one();
}

void DeviceWorker::body_waiting(bool waiting) {
  waiting_bodies_.fetch_add(waiting ? 1 : -1, std::memory_order_relaxed);
  if (waiting) notify_work();  // room for a child
}

// Room for one more task that waits for copies: a free slot among those (and those waiting for
// memory), and the data in flight within the budget (one task always fits, whatever its size).
bool DeviceWorker::has_room(int starting) const {
  return waiting_for_data() + starting < max_copying_ && within_budget();
}

// Room for one more task whose data is all here: a free slot among the tasks launched, and the
// data in flight within the budget (what tasks in flight hold cannot be evicted).
bool DeviceWorker::has_room_launched(int starting) const {
  return busy() - waiting_for_data() + starting < max_launched_ && within_budget();
}

bool DeviceWorker::idle() const {
  return messages_.empty() && ready_.empty() && in_flight_ == 0 && deferred_.empty();
}

bool DeviceWorker::has_work() const {
  return !messages_.empty() || work_offered_ ||
         (!ready_.empty() && !ready_looked_over_ && (has_room() || has_room_launched()));
}

void DeviceWorker::loop() {
  const BodyLaneScope lane(*this);
  for (;;) {
    {
      MutexLock lock(mutex_);
      wake_.wait(lock.native(),
                 [&]() VERSA_REQUIRES(mutex_) { return has_work() || (stopping_ && idle()); });
      if (stopping_ && idle()) return;
    }
    step();
  }
}

bool DeviceWorker::help(std::chrono::microseconds wait) {
  {
    MutexLock lock(mutex_);
    wake_.wait_for(lock.native(), wait, [&]() VERSA_REQUIRES(mutex_) { return has_work(); });
  }
  return step();
}

bool DeviceWorker::step() {
  std::vector<std::function<void()>> messages;
  std::vector<Task*> starting;
  {
    MutexLock guard(mutex_);
    messages.swap(messages_);
    work_offered_ = false;
  }
  for (auto& message : messages) message();
  bool progressed = !messages.empty();
  // A task ended (its completion handled in full: what it released may be what a task
  // launched now waits for), or a body started waiting for its children: the tasks waiting for
  // a stream go while there is room.
  while (!launchable_.empty() && launch_waiting()) progressed = true;
  // Tasks waiting for memory go first: something may have been freed.
  if (progressed && !deferred_.empty()) {
    std::vector<Task*> retry;
    retry.swap(deferred_);
    for (Task* task : retry) start(task);
  }
  const bool looked_over = take_ready(starting);
  for (Task* task : starting) start(task);
  if (looked_over && !starting.empty()) {
    // Those that did not stay in flight (refused, sent to the CPU, cancelled) left room that
    // the look over the queue counted as taken.
    MutexLock guard(mutex_);
    changed();
  }
  bool pulled = false;
  // Room left and nothing queued here that may start: take work waiting for placement. With
  // every slot of the tasks that wait for copies taken, only a task whose data is all here, as
  // take_ready looks over the queue for one: the kernels go on while the link is busy.
  while (has_room_launched()) {
    {
      MutexLock guard(mutex_);
      if (!ready_.empty() && !ready_looked_over_) break;
    }
    Task* task = host_.pull_for_device(node_, !has_room());
    if (!task) break;
    backlog_ns_.fetch_add(task->expected_ns, std::memory_order_relaxed);
    queued_tasks_.fetch_add(1, std::memory_order_relaxed);
    start(task);
    pulled = true;
  }
  return progressed || !starting.empty() || pulled;
}

// The queue's tasks go by priority, each while there is room for its kind: a task that waits for
// copies takes a slot of the window of those, a task whose data is all here one of the launched
// tasks'. When the first task's kind has no room left and the other's has, the first
// looked_over_at_most tasks are looked over for those of the other kind, so that a task whose
// data is here does not wait behind tasks that wait for the link (the device computes while the
// link is busy), nor the link behind tasks that wait for the device.
bool DeviceWorker::take_ready(std::vector<Task*>& starting) {
  int copying = 0, launched = 0;
  const auto fits = [&](bool here) {
    return here ? has_room_launched(launched) : has_room(copying);
  };
  const auto take = [&](Task* task, bool here) {
    starting.push_back(task);
    ++(here ? launched : copying);
  };
  {
    // While both windows have room a task's kind does not matter: the tasks go by priority under
    // one lock, each counted in both windows (so neither overflows), none of their replicas
    // looked at.
    MutexLock guard(mutex_);
    while (!ready_.empty() && has_room(copying) && has_room_launched(launched)) {
      starting.push_back(pop_first());
      ++copying;
      ++launched;
    }
    if (ready_.empty()) return false;
  }
  // More tasks wait: the kinds of those taken say how many more fit.
  copying = launched = 0;
  for (const Task* task : starting) ++(mover_.resident(*task, node_) ? launched : copying);
  for (;;) {
    Task* first = nullptr;
    {
      MutexLock guard(mutex_);
      if (ready_.empty()) return false;
      first = ready_.front();
    }
    const bool here = mover_.resident(*first, node_);  // no lock of ours held: replica locks
    if (!fits(here)) {
      if (!fits(!here)) return false;
      break;
    }
    MutexLock guard(mutex_);
    if (ready_.front() != first) continue;  // a task pushed meanwhile goes before it
    take(pop_first(), here);
  }
  std::vector<Task*> looked_over;
  std::uint64_t changes_seen = 0;
  {
    MutexLock guard(mutex_);
    if (ready_looked_over_) return false;
    changes_seen = changes_;
    looked_over.assign(ready_.begin(), ready_.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                            ready_.size(), looked_over_at_most)));
  }
  // Only this thread takes tasks out of the queue: those looked over are still in it.
  std::sort(looked_over.begin(), looked_over.end(),
            [](const Task* a, const Task* b) { return runs_later(b, a); });
  std::vector<Task*> taken;
  for (Task* task : looked_over) {
    const bool here = mover_.resident(*task, node_);
    if (!fits(here)) continue;
    take(task, here);
    taken.push_back(task);
  }
  MutexLock guard(mutex_);
  // Nothing to start, unless something changed while it looked (a task pushed, room made).
  ready_looked_over_ = taken.empty() && changes_ == changes_seen;
  if (taken.empty()) return ready_looked_over_;
  std::erase_if(ready_, [&](Task* task) {
    return std::find(taken.begin(), taken.end(), task) != taken.end();
  });
  std::make_heap(ready_.begin(), ready_.end(), runs_later);
  return false;
}

Task* DeviceWorker::pop_first() {
  std::pop_heap(ready_.begin(), ready_.end(), runs_later);
  Task* const first = ready_.back();
  ready_.pop_back();
  return first;
}

// A task of a serial type goes to stream 0, when the device has others for the rest; one with a
// positive priority to the high-priority streams, when the device has them; the others to the
// kernel streams (but stream 0 when there are serial types).
std::pair<int, int> DeviceWorker::streams_of(const Task& task) const {
  const int streams = device_.streams();
  const bool apart = !serial_types_.empty() && streams > 1;
  if (apart && task.type_name != nullptr &&
      std::find(serial_types_.begin(), serial_types_.end(), task.type_name) != serial_types_.end())
    return {0, 1};
  const int urgent = device_.priority_streams();
  if (task.priority > 0 && urgent > 0) return {streams, urgent};
  return apart ? std::pair{1, streams - 1} : std::pair{0, streams};
}

// A body that waits for its children holds no stream meanwhile (as in busy()): while one does,
// any task may launch, since it may be one of those children.
bool DeviceWorker::stream_free(const Task& task) const {
  if (waiting_bodies_.load(std::memory_order_relaxed) > 0) return true;
  const auto [first, count] = streams_of(task);
  for (int stream = first; stream < first + count; ++stream)
    if (on_stream_[stream] < tasks_per_stream_) return true;
  return false;
}

// The stream with the fewest tasks launched on it and not ended, so that a task does not queue
// behind a long kernel while another stream is idle; among equals, the next in turn.
int DeviceWorker::stream_for(const Task& task) {
  const auto [first, count] = streams_of(task);
  int chosen = -1;
  for (int i = 0; i < count; ++i) {
    const int stream = first + (next_stream_ + i) % count;
    if (chosen < 0 || on_stream_[stream] < on_stream_[chosen]) chosen = stream;
  }
  next_stream_ = (chosen - first + 1) % count;
  ++on_stream_[chosen];
  return chosen;
}

void DeviceWorker::start(Task* task) {
  // A cancelled task may be recycled at once: its expected time is read before.
  const std::int64_t expected_ns = task->expected_ns;
  if (host_.cancel_if_poisoned(*task)) {
    leave(expected_ns);
    return;
  }
  std::string why;
  const auto start = trace_started();
  const DataMover::Reservation reservation = mover_.reserve(*task, node_, why);
  record(start, "reserve", task->name ? task->name : "");
  switch (reservation) {
    case DataMover::Reservation::ready:
      ++in_flight_;
      in_flight_bytes_ += PlacementPolicy::data_bytes(*task);
      task->stream = no_stream;  // until it launches; its staging may fail before
      staging_.fetch_add(1, std::memory_order_relaxed);
      host_.stage(*task);
      return;
    case DataMover::Reservation::retry_later:
      deferred_.push_back(task);
      return;
    case DataMover::Reservation::impossible:
      // Tasks in flight hold buffers that will be released: try again after they end, unless
      // the only ones are waiting for their children and this task is one of their descendants.
      if (in_flight_ > waiting_bodies_.load(std::memory_order_relaxed) ||
          (in_flight_ > 0 && !host_.has_ancestor_on(*task, node_))) {
        deferred_.push_back(task);
        return;
      }
      leave(task->expected_ns);
      host_.device_refused(*task, node_, why);
      return;
  }
}

void DeviceWorker::ended(Task* task, OperationResult result) {
  mover_.unreserve(*task, node_);
  if (task->stream != no_stream) {
    VERSA_ASSERT(task->stream >= 0 && task->stream < static_cast<int>(on_stream_.size()),
                 "a task ended on a stream the device does not have");
    --on_stream_[task->stream];
  }
  --in_flight_;
  in_flight_bytes_ -= PlacementPolicy::data_bytes(*task);
  leave(task->expected_ns);
  host_.device_task_ended(*task, node_, std::move(result));
}

// A task no longer counts in this device's backlog (before the runtime may recycle it).
void DeviceWorker::leave(std::int64_t expected_ns) {
  backlog_ns_.fetch_sub(expected_ns, std::memory_order_relaxed);
  queued_tasks_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace versa::detail
