// Execution times learned online per (task type, device kind, work size), as StarPU's history
// models: the estimate is the median of the recent samples, so one preempted run or one cold
// start does not move it. Optionally saved to a file and loaded at the next start.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
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
  std::optional<double> estimate(std::string_view type, DeviceKind kind, std::size_t size);
  // Samples recorded plus explorations in flight for the combination.
  int explorations(std::string_view type, DeviceKind kind, std::size_t size);
  // Returns true (and counts an exploration in flight) when the combination still needs
  // samples and not enough runs to provide them are under way.
  bool claim_exploration(std::string_view type, DeviceKind kind, std::size_t size);
  // Gives back a claim whose run ended without a measurement (it failed, was cancelled or ran
  // elsewhere).
  void release_exploration(std::string_view type, DeviceKind kind, std::size_t size);
  // Adds a measured run; `explored` when it was claimed by claim_exploration.
  void record(std::string_view type, DeviceKind kind, std::size_t size, double seconds,
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
  // (type name, kind, size): looked up with a view of the name, stored with its own copy.
  struct Key {
    std::string type;
    DeviceKind kind;
    std::size_t size;
  };
  struct KeyView {
    std::string_view type;
    DeviceKind kind;
    std::size_t size;
  };
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(const KeyView& k) const {
      std::size_t h = std::hash<std::string_view>()(k.type);
      h ^= (k.size + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2));
      return h ^ (static_cast<std::size_t>(k.kind) << 56);
    }
    std::size_t operator()(const Key& k) const { return (*this)(KeyView{k.type, k.kind, k.size}); }
  };
  struct KeyEqual {
    using is_transparent = void;
    static KeyView view(const Key& k) { return {k.type, k.kind, k.size}; }
    static KeyView view(const KeyView& k) { return k; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      const KeyView x = view(a), y = view(b);
      return x.kind == y.kind && x.size == y.size && x.type == y.type;
    }
  };
  // The entries are spread over shards by key, each with its own lock, so that devices and CPU
  // workers recording and estimating different task types do not queue behind one mutex.
  static constexpr std::size_t shard_count = 16;
  struct alignas(64) Shard {
    mutable std::mutex mutex;
    std::unordered_map<Key, Entry, KeyHash, KeyEqual> entries;  // guarded by mutex
  };
  Shard& shard_of(const KeyView& key) { return shards_[KeyHash()(key) % shard_count]; }
  // The entry of `key` in `shard` (mutex held), created when `create`; null when absent.
  static Entry* find(Shard& shard, const KeyView& key, bool create);
  static void update_median(Entry& entry);

  std::array<Shard, shard_count> shards_;
};

}  // namespace versa::detail
