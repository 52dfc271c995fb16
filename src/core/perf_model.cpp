#include "core/perf_model.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "base/cache_files.hpp"
#include "device/device_registry.hpp"

namespace versa::detail {

PerfModel::Curve* PerfModel::find(Shard& shard, const KeyView& key, bool create) {
  auto it = shard.curves.find(key);
  if (it != shard.curves.end()) return &it->second;
  if (!create) return nullptr;
  return &shard.curves[Key{std::string(key.type), key.kind}];
}

void PerfModel::add_sample(Curve& curve, Entry& entry, double seconds) {
  entry.samples[entry.count % window] = seconds;
  if (entry.count < window) ++curve.samples;
  ++entry.count;
  const int n = std::min(entry.count, window);
  std::array<double, window> sorted = entry.samples;
  std::sort(sorted.begin(), sorted.begin() + n);
  entry.median = sorted[n / 2];
  entry.low = sorted[n / 4];
  entry.high = sorted[(3 * n) / 4];
}

std::optional<PerfModel::Spread> PerfModel::Curve::at(std::size_t size, bool provisional) const {
  if (!(provisional ? samples > 0 : calibrated())) return std::nullopt;
  // A size with samples of its own goes by them.
  const auto exact = sizes.find(size);
  if (exact != sizes.end() && exact->second.count > 0)
    return Spread{exact->second.median, exact->second.low, exact->second.high};
  // The two sizes with samples nearest below and above (either may be missing).
  using Point = std::pair<double, const Entry*>;  // (size, its samples)
  std::vector<Point> below, above;
  for (auto it = sizes.lower_bound(size); it != sizes.begin() && below.size() < 2;) {
    --it;
    if (it->second.count > 0) below.emplace_back(it->first, &it->second);
  }
  for (auto it = sizes.upper_bound(size); it != sizes.end() && above.size() < 2; ++it)
    if (it->second.count > 0) above.emplace_back(it->first, &it->second);
  Point a, b;
  if (!below.empty() && !above.empty()) {
    a = below[0], b = above[0];
  } else {
    const std::vector<Point>& side = below.empty() ? above : below;
    a = side[0];
    if (side.size() > 1) b = side[1];
  }
  // The nearest size's spread, in proportion to the estimate.
  auto spread = [&a](double seconds) {
    const double scale = a.second->median > 0 ? seconds / a.second->median : 1;
    return Spread{seconds, a.second->low * scale, a.second->high * scale};
  };
  if (!b.second)  // in proportion to the only size with samples
    return spread(a.first > 0 ? a.second->median * static_cast<double>(size) / a.first
                              : a.second->median);
  if (size == 0 || a.first <= 0 || a.second->median <= 0 || b.second->median <= 0)
    return spread(a.second->median);
  // A power law through both; its exponent bounded so that two noisy samples of nearby sizes
  // cannot send an extrapolation far off.
  const double exponent = std::clamp(
      std::log(b.second->median / a.second->median) / std::log(b.first / a.first), 0.0, 3.0);
  return spread(a.second->median * std::pow(static_cast<double>(size) / a.first, exponent));
}

std::optional<double> PerfModel::estimate(std::string_view type, DeviceKind kind,
                                          std::size_t size) {
  const std::optional<Spread> spread = estimate_spread(type, kind, size);
  return spread ? std::optional<double>(spread->seconds) : std::nullopt;
}

std::optional<PerfModel::Spread> PerfModel::estimate_spread(std::string_view type, DeviceKind kind,
                                                            std::size_t size, bool provisional) {
  const KeyView key{type, kind};
  Shard& shard = shard_of(key);
  MutexLock guard(shard.mutex);
  const Curve* curve = find(shard, key, false);
  return curve ? curve->at(size, provisional) : std::nullopt;
}

int PerfModel::explorations(std::string_view type, DeviceKind kind) {
  const KeyView key{type, kind};
  Shard& shard = shard_of(key);
  MutexLock guard(shard.mutex);
  const Curve* curve = find(shard, key, false);
  if (!curve) return 0;
  return curve->calibrated() ? calibration_samples : curve->samples + curve->exploring;
}

bool PerfModel::claim_exploration(std::string_view type, DeviceKind kind) {
  const KeyView key{type, kind};
  Shard& shard = shard_of(key);
  MutexLock guard(shard.mutex);
  Curve& curve = *find(shard, key, true);
  if (curve.calibrated() || curve.samples + curve.exploring >= calibration_samples) return false;
  ++curve.exploring;
  return true;
}

std::pair<double, double> PerfModel::Curve::rates() const {
  double lowest = std::numeric_limits<double>::infinity(), highest = 0;
  for (const auto& [size, entry] : sizes) {
    if (entry.count == 0) continue;
    const double rate = entry.median / static_cast<double>(std::max<std::size_t>(size, 1));
    lowest = std::min(lowest, rate);
    highest = std::max(highest, rate);
  }
  return {lowest, highest};
}

bool PerfModel::settle_if_far_slower(std::string_view type, DeviceKind slow, DeviceKind fast) {
  // The fast kind's slowest rate, then the slow kind's fastest, one shard's lock at a time.
  double fast_highest = 0;
  {
    const KeyView key{type, fast};
    Shard& shard = shard_of(key);
    MutexLock guard(shard.mutex);
    const Curve* curve = find(shard, key, false);
    if (!curve || curve->samples == 0) return false;
    fast_highest = curve->rates().second;
  }
  const KeyView key{type, slow};
  Shard& shard = shard_of(key);
  MutexLock guard(shard.mutex);
  Curve* curve = find(shard, key, false);
  if (!curve || curve->samples == 0) return false;
  if (!curve->calibrated() && curve->rates().first >= far_slower * fast_highest)
    curve->settled = true;
  return curve->calibrated();
}

void PerfModel::release_exploration(std::string_view type, DeviceKind kind) {
  const KeyView key{type, kind};
  Shard& shard = shard_of(key);
  MutexLock guard(shard.mutex);
  if (Curve* curve = find(shard, key, false); curve && curve->exploring > 0) --curve->exploring;
}

void PerfModel::record(std::string_view type, DeviceKind kind, std::size_t size, double seconds,
                       bool explored) {
  const KeyView key{type, kind};
  Shard& shard = shard_of(key);
  MutexLock guard(shard.mutex);
  Curve& curve = *find(shard, key, true);
  if (explored && curve.exploring > 0) --curve.exploring;
  add_sample(curve, curve.sizes[size], seconds);
}

int PerfModel::load(const std::string& file) {
  std::ifstream in(file);
  if (!in) return 0;
  // Every line is read before any is applied: a malformed file changes nothing.
  struct Line {
    std::string type;
    DeviceKind kind;
    std::size_t bytes;
    double seconds;
    int count;
  };
  std::vector<Line> lines;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.empty() || text[0] == '#') continue;
    std::istringstream fields(text);
    std::string kind_name;
    Line line{};
    if (!std::getline(fields, line.type, '\t') || !std::getline(fields, kind_name, '\t') ||
        !(fields >> line.bytes >> line.seconds >> line.count) || line.seconds < 0 ||
        line.count < 1 || !find_device_kind(kind_name, line.kind))
      throw std::runtime_error("performance model file '" + file + "', line " +
                               std::to_string(number) +
                               ": expected <type>\\t<device kind>\\t<size> <seconds> <samples>");
    lines.push_back(std::move(line));
  }
  for (const Line& line : lines) {
    const KeyView key{line.type, line.kind};
    Shard& shard = shard_of(key);
    MutexLock guard(shard.mutex);
    Curve& curve = *find(shard, key, true);
    Entry& entry = curve.sizes[line.bytes];
    curve.samples -= std::min(entry.count, window);
    entry.count = std::min(line.count, window);
    curve.samples += entry.count;
    std::fill(entry.samples.begin(), entry.samples.begin() + entry.count, line.seconds);
    entry.median = entry.low = entry.high = line.seconds;
  }
  return static_cast<int>(lines.size());
}

std::string PerfModel::save(const std::string& file) const {
  return replace_file(file, [this](std::ostream& out) {
    out.precision(9);
    out << "# versa performance model: type\tkind\tsize seconds samples\n";
    std::vector<std::pair<std::size_t, const Entry*>> measured;
    for (const Shard& shard : shards_) {
      MutexLock guard(shard.mutex);
      for (const auto& [key, curve] : shard.curves) {
        measured.clear();
        for (const auto& [size, entry] : curve.sizes)
          if (entry.count > 0) measured.emplace_back(size, &entry);
        // Sizes spread evenly over the curve's range, its smallest and largest among them.
        const std::size_t n = measured.size(), kept = std::min(n, saved_sizes);
        for (std::size_t k = 0; k < kept; ++k) {
          const auto& [size, entry] = measured[kept == 1 ? 0 : k * (n - 1) / (kept - 1)];
          out << key.type << '\t' << device_kind_name(key.kind) << '\t' << size << ' '
              << entry->median << ' ' << entry->count << '\n';
        }
      }
    }
  });
}

std::string PerfModel::file_to_keep(const std::string& configured, bool gpu) {
  if (configured == "none") return {};
  if (!configured.empty()) return configured;
  return gpu ? default_file() : std::string();
}

std::string PerfModel::default_file() {
  const std::string directory = cache_directory();
  if (directory.empty()) return {};
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0 || host[0] == '\0') return {};
  std::error_code error;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error || program.filename().empty()) return {};
  return directory + "/perf-model/" + host.data() + "/" + program.filename().string();
}

}  // namespace versa::detail
