// Statistics per task type and device kind (Config::task_statistics): each recorder — a CPU
// worker, a device worker, any other thread — writes its own table under its own lock (never
// contended but by a reader), and a reader merges the tables by name.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "device/device.hpp"
#include "versa/statistics.hpp"

namespace versa::detail {

class TaskStatisticsLog {
 public:
  // `recorders`: how many threads record (slot r for recorder r).
  explicit TaskStatisticsLog(int recorders) : tables_(recorders) {}

  // A task of `type` (a name that outlives the log) ran on a device of `kind` for `seconds`,
  // and `bytes` were copied for its inputs.
  void record(int recorder, const char* type, DeviceKind kind, double seconds, std::uint64_t bytes);
  // The merged figures, sorted by type, then kind.
  std::vector<TaskStatistics> snapshot() const;

 private:
  struct Record {
    std::uint64_t tasks = 0;
    double seconds = 0;
    std::uint64_t bytes = 0;
    std::vector<float> samples;  // every kernel time, for the median
  };
  struct KeyHash {
    std::size_t operator()(const std::pair<const char*, DeviceKind>& k) const {
      return std::hash<const void*>()(k.first) ^ static_cast<std::size_t>(k.second);
    }
  };
  struct alignas(64) Table {
    mutable Mutex mutex;
    std::unordered_map<std::pair<const char*, DeviceKind>, Record, KeyHash> records
        VERSA_GUARDED_BY(mutex);
  };
  std::vector<Table> tables_;
};

}  // namespace versa::detail
