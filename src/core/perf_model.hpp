// Execution times learned online per (task type, device kind, data size), as StarPU's history
// models: the estimate is the median of the recent samples, so one preempted run or one cold
// start does not move it. Optionally saved to a file and loaded at the next start.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "device/device.hpp"

namespace versa::detail {

class PerfModel {
 public:
  // Samples needed before an estimate is trusted; until then the policy explores.
  static constexpr int calibration_samples = 3;

  // The expected execution time in seconds, or nothing while uncalibrated.
  std::optional<double> estimate(std::string_view type, DeviceKind kind, std::size_t bytes);
  // Samples recorded plus explorations in flight for the combination.
  int explorations(std::string_view type, DeviceKind kind, std::size_t bytes);
  // Returns true (and counts an exploration in flight) when the combination still needs
  // samples and not enough runs to provide them are under way.
  bool claim_exploration(std::string_view type, DeviceKind kind, std::size_t bytes);
  // Gives back a claim whose run ended without a measurement (it failed, was cancelled or ran
  // elsewhere).
  void release_exploration(std::string_view type, DeviceKind kind, std::size_t bytes);
  // Adds a measured run; `explored` when it was claimed by claim_exploration.
  void record(std::string_view type, DeviceKind kind, std::size_t bytes, double seconds,
              bool explored);

  // One line per entry: name, kind, bytes, estimate, sample count. Load ignores a missing file
  // and throws std::runtime_error naming the file and line for a malformed one.
  void load(const std::string& file);
  void save(const std::string& file) const;

 private:
  static constexpr int window = 16;
  struct Entry {
    std::array<double, window> samples{};
    int count = 0;      // samples recorded (the window keeps the last `window`)
    int exploring = 0;  // claimed explorations not yet recorded
    double median = 0;
  };
  static std::string key(std::string_view type, DeviceKind kind, std::size_t bytes);
  static void update_median(Entry& entry);

  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;  // guarded by mutex_
};

}  // namespace versa::detail
