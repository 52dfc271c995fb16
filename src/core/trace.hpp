// Per-worker records of task executions, written at shutdown as Chrome trace-event JSON
// (chrome://tracing and Perfetto open it): one track per worker, one slice per task.
// When tracing is off nothing is recorded and the only cost is one predictable branch per task.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace versa::detail {

class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;

  TraceRecorder(bool enabled, int workers);

  bool enabled() const { return enabled_; }

  // Adds a track named `name` (e.g. a device) before recording starts; returns its index.
  int add_track(std::string name);

  // Records that worker `worker` ran task `name` (a string that outlives the recorder) from
  // `start` to `end`. Called only by that worker's thread.
  void record(int worker, const char* name, Clock::time_point start, Clock::time_point end) {
    tracks_[worker].events.push_back({name, start, end});
  }

  // Writes the JSON file. Throws std::runtime_error naming the file if it cannot be written.
  void write(const std::string& path) const;

 private:
  struct Event {
    const char* name;
    Clock::time_point start;
    Clock::time_point end;
  };
  struct alignas(64) Track {
    std::string name;
    std::vector<Event> events;  // owned by one worker thread until write()
  };

  bool enabled_;
  Clock::time_point origin_;
  std::vector<Track> tracks_;
};

}  // namespace versa::detail
