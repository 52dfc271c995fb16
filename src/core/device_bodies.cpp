// Bodies of device tasks (Scheduler as BodyHost): the task API on a device's thread, and the
// waits there, which help the thread's lane (docs/architecture.md, "Bodies on device threads").
#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "core/device_dispatch.hpp"
#include "core/scheduler.hpp"

namespace versa::detail {

namespace {
// The task whose body runs on this thread of a device (Scheduler::run_body), and the scheduler
// that runs it; nulls elsewhere. Apart from the CPU workers' running task, so that their paths
// read nothing more, and detach() stays refused on devices.
struct DeviceBody {
  Task* task = nullptr;
  const Scheduler* owner = nullptr;
};
thread_local DeviceBody this_thread_device_body;
}  // namespace

Task* Scheduler::device_body_task() const {
  return this_thread_device_body.owner == this ? this_thread_device_body.task : nullptr;
}

void Scheduler::run_body(Task& task, void (*body)(void*), void* context) {
  const DeviceBody enclosing = std::exchange(this_thread_device_body, DeviceBody{&task, this});
  struct Restore {
    DeviceBody enclosing;
    ~Restore() { this_thread_device_body = enclosing; }
  } restore{enclosing};
  try {
    body(context);
  } catch (...) {
    wait_for_children_on_device(task);
    throw;
  }
  wait_for_children_on_device(task);
}

void Scheduler::wait_for_children_on_device(Task& task) {
  wait_in_device_body(task, [&task] { return task.children.load(std::memory_order_acquire) == 0; });
}

// The body's thread is its device's lane (an emulated stream, the device's worker): it runs
// what is queued there while it waits, since what it waits for may be queued there too, and the
// device stops counting the task as holding a place in flight. What it waits for does not wake
// it (a finishing child does not know where its parent waits): it looks again after each piece
// of help, or after waits that grow to a millisecond.
void Scheduler::wait_in_device_body(Task& task, const std::function<bool()>& done) {
  if (done()) return;
  BodyLane* lane = current_body_lane();
  devices_->body_waiting(task, true);
  if (lane) lane->pause();
  constexpr std::chrono::microseconds first_wait{20};
  constexpr std::chrono::microseconds longest_wait{1000};
  for (auto wait = first_wait; !done();) {
    if (lane ? lane->help(wait) : false) {
      wait = first_wait;
      continue;
    }
    if (!lane) std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, longest_wait);
  }
  if (lane) lane->resume();
  devices_->body_waiting(task, false);
}

}  // namespace versa::detail
