#include "core/perf_model.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "device/device_registry.hpp"

namespace versa::detail {

std::string PerfModel::key(std::string_view type, DeviceKind kind, std::size_t bytes) {
  std::string k(type);
  k += '\t';
  k += device_kind_name(kind);
  k += '\t';
  k += std::to_string(bytes);
  return k;
}

void PerfModel::update_median(Entry& entry) {
  const int n = std::min(entry.count, window);
  std::array<double, window> sorted = entry.samples;
  std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.begin() + n);
  entry.median = sorted[n / 2];
}

std::optional<double> PerfModel::estimate(std::string_view type, DeviceKind kind,
                                          std::size_t bytes) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = entries_.find(key(type, kind, bytes));
  if (it == entries_.end() || it->second.count < calibration_samples) return std::nullopt;
  return it->second.median;
}

int PerfModel::explorations(std::string_view type, DeviceKind kind, std::size_t bytes) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = entries_.find(key(type, kind, bytes));
  return it == entries_.end() ? 0 : it->second.count + it->second.exploring;
}

bool PerfModel::claim_exploration(std::string_view type, DeviceKind kind, std::size_t bytes) {
  std::lock_guard<std::mutex> guard(mutex_);
  Entry& entry = entries_[key(type, kind, bytes)];
  if (entry.count + entry.exploring >= calibration_samples) return false;
  ++entry.exploring;
  return true;
}

void PerfModel::release_exploration(std::string_view type, DeviceKind kind, std::size_t bytes) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = entries_.find(key(type, kind, bytes));
  if (it != entries_.end() && it->second.exploring > 0) --it->second.exploring;
}

void PerfModel::record(std::string_view type, DeviceKind kind, std::size_t bytes, double seconds,
                       bool explored) {
  std::lock_guard<std::mutex> guard(mutex_);
  Entry& entry = entries_[key(type, kind, bytes)];
  if (explored && entry.exploring > 0) --entry.exploring;
  entry.samples[entry.count % window] = seconds;
  ++entry.count;
  update_median(entry);
}

void PerfModel::load(const std::string& file) {
  std::ifstream in(file);
  if (!in) return;
  std::lock_guard<std::mutex> guard(mutex_);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string type, kind;
    DeviceKind known;
    std::size_t bytes = 0;
    double seconds = 0;
    int count = 0;
    if (!std::getline(fields, type, '\t') || !std::getline(fields, kind, '\t') ||
        !(fields >> bytes >> seconds >> count) || seconds < 0 || count < 1 ||
        !find_device_kind(kind, known))
      throw std::runtime_error("performance model file '" + file + "', line " +
                               std::to_string(number) +
                               ": expected <type>\\t<device kind>\\t<bytes> <seconds> "
                               "<samples>");
    Entry& entry = entries_[type + '\t' + kind + '\t' + std::to_string(bytes)];
    entry.count = std::min(count, window);
    std::fill(entry.samples.begin(), entry.samples.begin() + entry.count, seconds);
    entry.median = seconds;
  }
}

void PerfModel::save(const std::string& file) const {
  std::ofstream out(file);
  if (!out) throw std::runtime_error("cannot write the performance model to '" + file + "'");
  out << "# versa performance model: type\tkind\tbytes seconds samples\n";
  std::lock_guard<std::mutex> guard(mutex_);
  for (const auto& [k, entry] : entries_)
    if (entry.count > 0) out << k << ' ' << entry.median << ' ' << entry.count << '\n';
}

}  // namespace versa::detail
