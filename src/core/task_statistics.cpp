#include "core/task_statistics.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "device/device_registry.hpp"

namespace versa::detail {

void TaskStatisticsLog::record(int recorder, const char* type, DeviceKind kind, double seconds,
                               std::uint64_t bytes) {
  Table& table = tables_[recorder];
  MutexLock guard(table.mutex);
  Record& r = table.records[{type, kind}];
  ++r.tasks;
  r.seconds += seconds;
  r.bytes += bytes;
  r.samples.push_back(static_cast<float>(seconds));
}

std::vector<TaskStatistics> TaskStatisticsLog::snapshot() const {
  // Types are keyed by name pointer while recording (two types may share a name): merge by name.
  std::map<std::pair<std::string, DeviceKind>, Record> merged;
  for (const Table& table : tables_) {
    MutexLock guard(table.mutex);
    for (const auto& [key, r] : table.records) {
      Record& m = merged[{key.first, key.second}];
      m.tasks += r.tasks;
      m.seconds += r.seconds;
      m.bytes += r.bytes;
      m.samples.insert(m.samples.end(), r.samples.begin(), r.samples.end());
    }
  }
  std::vector<TaskStatistics> result;
  for (auto& [key, r] : merged) {
    TaskStatistics s;
    s.task_type = key.first;
    s.device_kind = device_kind_name(key.second);
    s.tasks = r.tasks;
    s.kernel_seconds = r.seconds;
    s.bytes_moved = r.bytes;
    auto middle = r.samples.begin() + static_cast<std::ptrdiff_t>(r.samples.size() / 2);
    std::nth_element(r.samples.begin(), middle, r.samples.end());
    s.median_kernel_seconds = r.samples.empty() ? 0 : *middle;
    result.push_back(std::move(s));
  }
  return result;
}

}  // namespace versa::detail
