// Records of what ran and what moved, written at shutdown as Chrome trace-event JSON
// (chrome://tracing and Perfetto open it). The host is one process with a track per CPU worker
// (a slice per task, and per reduction flush applied there) and a counter of ready tasks; each
// device is a process of its own with a track for the kernels of each of its kernel streams (its
// high-priority streams last), and tracks for its copies to the device, its copies to the host
// (a slice per copy, with its bytes and handle), its evictions (an instant each), the
// reduction flushes applied there, and what its worker thread does for each task (reserving its
// memory, launching it), which says whether that thread keeps up.
//
// Writers: a CPU worker's track is written only by its thread, without a lock. A device's tracks
// are written by its worker and by the device's own threads (copy completions), and the ready
// counter by any thread, so those take a spin lock — only when tracing is on. When it is off
// nothing is recorded and the only cost is one predictable branch at each hook.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/spin_lock.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;

  // The tracks of a device besides its kernel streams'. `worker`: the time its worker thread
  // spends reserving a task's memory (allocations included) and launching it (its host code).
  enum class DeviceTrack { copies_to_device, copies_to_host, evictions, flushes, worker };

  // `workers` CPU worker tracks when `enabled`, none otherwise.
  TraceRecorder(bool enabled, int workers);
  ~TraceRecorder();
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  bool enabled() const { return enabled_; }

  // Adds the tracks of the next device node (1, 2, ... in the order of the calls), named after
  // `name`, with `streams` kernel streams and `priority_streams` high-priority ones
  // (Device::streams, Device::priority_streams). Before recording starts.
  void add_device(const std::string& name, int streams, int priority_streams);

  // Records that worker `worker` ran task `name` (a string that outlives the recorder) from
  // `start` to `end`. Called only by that worker's thread.
  void record(int worker, const char* name, Clock::time_point start, Clock::time_point end) {
    workers_[worker].slices.push_back({name, start, end});
  }
  // Records that worker `worker` applied the partials of the handle named `handle` from `start`
  // to `end`. Called only by that worker's thread.
  void record_flush(int worker, const char* name, std::string_view handle, Clock::time_point start,
                    Clock::time_point end);

  // Records on a track of device node `node` an operation `name` (a string that outlives the
  // recorder) that the device measured at `seconds` and that has just completed; `bytes` and
  // `handle` are its arguments (left out when 0 and empty). An eviction is an instant: `seconds`
  // is ignored. Any thread.
  void record_device(int node, DeviceTrack track, const char* name, double seconds,
                     std::uint64_t bytes, std::string_view handle);
  // Records on the track of kernel stream `stream` of device node `node` a task `name` (a string
  // that outlives the recorder) that ran there for `seconds` and has just completed. Any thread.
  void record_kernel(int node, int stream, const char* name, double seconds);

  // The number of ready tasks changed by `delta` (+1: a task was queued for a CPU worker; -1:
  // one started); samples the counter. `worker`: the calling thread's worker index, or -1.
  void ready_changed(int worker, int delta);

  // How the trace names a handle called `name` (which may be empty).
  static std::string_view handle_label(const std::string& name) {
    return name.empty() ? std::string_view("(unnamed)") : std::string_view(name);
  }

  // Writes the JSON file. Throws std::runtime_error naming the file if it cannot be written.
  // Every writer must have stopped.
  void write(const std::string& path) const;

 private:
  struct Slice {
    const char* name;
    Clock::time_point start;
    Clock::time_point end;
  };
  // A slice (or an instant: start == end) with the data it concerns.
  struct Detailed {
    const char* name;
    Clock::time_point start;
    Clock::time_point end;
    std::uint64_t bytes;
    std::string handle;
  };
  struct Sample {
    Clock::time_point time;
    std::int64_t ready;
  };
  struct alignas(64) WorkerTrack {
    std::string name;
    // Owned by the worker's thread until write().
    std::vector<Slice> slices;
    std::vector<Detailed> flushes;
    std::vector<Sample> samples;
  };
  struct DeviceTracks;
  class Writer;

  bool enabled_;
  Clock::time_point origin_;
  std::vector<WorkerTrack> workers_;
  // One per device node (index node - 1); added before recording starts.
  std::vector<std::unique_ptr<DeviceTracks>> devices_;
  // Tasks queued for a CPU worker and not started: changed by any thread; relaxed, since a
  // sample only needs some value in the counter's modification order.
  std::atomic<std::int64_t> ready_{0};
  mutable SpinLock other_samples_lock_;
  // Samples taken by threads that are not CPU workers (the main program, device workers).
  std::vector<Sample> other_samples_ VERSA_GUARDED_BY(other_samples_lock_);
};

}  // namespace versa::detail
