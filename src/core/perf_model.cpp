#include "core/perf_model.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "device/device_registry.hpp"

namespace versa::detail {

PerfModel::Entry* PerfModel::find(Shard& shard, const KeyView& key, bool create) {
  auto it = shard.entries.find(key);
  if (it != shard.entries.end()) return &it->second;
  if (!create) return nullptr;
  return &shard.entries[Key{std::string(key.type), key.kind, key.size}];
}

void PerfModel::update_median(Entry& entry) {
  const int n = std::min(entry.count, window);
  std::array<double, window> sorted = entry.samples;
  std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.begin() + n);
  entry.median = sorted[n / 2];
}

std::optional<double> PerfModel::estimate(std::string_view type, DeviceKind kind,
                                          std::size_t bytes) {
  const KeyView key{type, kind, bytes};
  Shard& shard = shard_of(key);
  std::lock_guard<std::mutex> guard(shard.mutex);
  const Entry* entry = find(shard, key, false);
  if (!entry || entry->count < calibration_samples) return std::nullopt;
  return entry->median;
}

int PerfModel::explorations(std::string_view type, DeviceKind kind, std::size_t bytes) {
  const KeyView key{type, kind, bytes};
  Shard& shard = shard_of(key);
  std::lock_guard<std::mutex> guard(shard.mutex);
  const Entry* entry = find(shard, key, false);
  return entry ? entry->count + entry->exploring : 0;
}

bool PerfModel::claim_exploration(std::string_view type, DeviceKind kind, std::size_t bytes) {
  const KeyView key{type, kind, bytes};
  Shard& shard = shard_of(key);
  std::lock_guard<std::mutex> guard(shard.mutex);
  Entry& entry = *find(shard, key, true);
  if (entry.count + entry.exploring >= calibration_samples) return false;
  ++entry.exploring;
  return true;
}

void PerfModel::release_exploration(std::string_view type, DeviceKind kind, std::size_t bytes) {
  const KeyView key{type, kind, bytes};
  Shard& shard = shard_of(key);
  std::lock_guard<std::mutex> guard(shard.mutex);
  Entry* entry = find(shard, key, false);
  if (entry && entry->exploring > 0) --entry->exploring;
}

void PerfModel::record(std::string_view type, DeviceKind kind, std::size_t bytes, double seconds,
                       bool explored) {
  const KeyView key{type, kind, bytes};
  Shard& shard = shard_of(key);
  std::lock_guard<std::mutex> guard(shard.mutex);
  Entry& entry = *find(shard, key, true);
  if (explored && entry.exploring > 0) --entry.exploring;
  entry.samples[entry.count % window] = seconds;
  ++entry.count;
  update_median(entry);
}

void PerfModel::load(const std::string& file) {
  std::ifstream in(file);
  if (!in) return;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string type, kind_name;
    DeviceKind kind;
    std::size_t bytes = 0;
    double seconds = 0;
    int count = 0;
    if (!std::getline(fields, type, '\t') || !std::getline(fields, kind_name, '\t') ||
        !(fields >> bytes >> seconds >> count) || seconds < 0 || count < 1 ||
        !find_device_kind(kind_name, kind))
      throw std::runtime_error("performance model file '" + file + "', line " +
                               std::to_string(number) +
                               ": expected <type>\\t<device kind>\\t<size> <seconds> <samples>");
    const KeyView key{type, kind, bytes};
    Shard& shard = shard_of(key);
    std::lock_guard<std::mutex> guard(shard.mutex);
    Entry& entry = *find(shard, key, true);
    entry.count = std::min(count, window);
    std::fill(entry.samples.begin(), entry.samples.begin() + entry.count, seconds);
    entry.median = seconds;
  }
}

void PerfModel::save(const std::string& file) const {
  std::ofstream out(file);
  if (!out) throw std::runtime_error("cannot write the performance model to '" + file + "'");
  out << "# versa performance model: type\tkind\tsize seconds samples\n";
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> guard(shard.mutex);
    for (const auto& [key, entry] : shard.entries)
      if (entry.count > 0)
        out << key.type << '\t' << device_kind_name(key.kind) << '\t' << key.size << ' '
            << entry.median << ' ' << entry.count << '\n';
  }
}

}  // namespace versa::detail
