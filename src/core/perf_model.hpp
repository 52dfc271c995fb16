// Execution times learned online per (task type, device kind, work size), as StarPU's history
// models: the estimate is the median of the recent samples, so one preempted run or one cold
// start does not move it. Saved to a file and loaded at the next start when the runtime keeps
// it (Config::perf_model_file).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "device/device.hpp"

namespace versa::detail {

class PerfModel {
 public:
  // Samples needed before an estimate is trusted; until then the policy explores.
  static constexpr int calibration_samples = 3;

  // The expected execution time in seconds, or nothing while uncalibrated. A (task type, device
  // kind) is calibrated once it has calibration_samples samples, of one size or of several: a
  // size without samples of its own is then estimated from the sizes that have some (see
  // `Curve`), so that the edge tiles of a tiled algorithm are not explored one by one, and
  // tasks whose sizes all differ (an FMM's interaction counts) still calibrate.
  std::optional<double> estimate(std::string_view type, DeviceKind kind, std::size_t size);
  // The estimate with the spread of the runs behind it: their median and their first and third
  // quartiles (for a size without samples of its own, the nearest such size's quartiles in
  // proportion to the estimate; for sizes loaded from a file, the median). Placement asks
  // whether one device kind is faster than another beyond the noise of their runs.
  struct Spread {
    double seconds;
    double low;
    double high;
  };
  // With `provisional`, from the runs so far, however few (nothing before the first has ended):
  // for tasks that wait for placement while their type is being explored.
  std::optional<Spread> estimate_spread(std::string_view type, DeviceKind kind, std::size_t size,
                                        bool provisional = false);
  // Samples recorded plus explorations in flight for the combination's type and kind;
  // calibration_samples when it needs none (it is calibrated).
  int explorations(std::string_view type, DeviceKind kind);
  // Returns true (and counts an exploration in flight) when the combination still needs
  // samples and not enough runs to provide them are under way.
  bool claim_exploration(std::string_view type, DeviceKind kind);
  // Calibrates (type, slow) on the samples it has, however few, when they are at least
  // far_slower times those of (type, fast) in time per unit of size, and returns whether it is
  // calibrated. On a GPU machine a core takes 300-5000 times as long as the GPU for a tile
  // kernel of 2048 (0.3-1.5 s): every exploration beyond the first one that shows it is one
  // more such kernel on the factorisation's path, for an estimate that no placement decision
  // needs to be more precise.
  static constexpr double far_slower = 100;
  bool settle_if_far_slower(std::string_view type, DeviceKind slow, DeviceKind fast);
  // Gives back a claim whose run ended without a measurement (it failed, was cancelled or ran
  // elsewhere).
  void release_exploration(std::string_view type, DeviceKind kind);
  // Adds a measured run; `explored` when it was claimed by claim_exploration.
  void record(std::string_view type, DeviceKind kind, std::size_t size, double seconds,
              bool explored);

  // One line per entry: name, kind, bytes, estimate, sample count. Load returns the entries
  // read: none from a missing file; for a malformed one it throws std::runtime_error naming
  // the file and line, and changes nothing. Save replaces the file whole (replace_file), with
  // at most saved_sizes sizes per (type, kind), spread over their range, so that a program
  // whose sizes differ from run to run (an FMM's interaction counts) does not grow it without
  // end; it returns "" or why it could not.
  static constexpr std::size_t saved_sizes = 256;
  int load(const std::string& file);
  [[nodiscard]] std::string save(const std::string& file) const;
  // Where the model of this program on this machine is kept by default:
  // cache_directory()/perf-model/<host name>/<program name>; "" when there is no cache
  // directory. Per host, as a home directory may be shared by machines with other devices;
  // per program, as two programs may give one name to different kernels.
  static std::string default_file();
  // The file the runtime keeps the model in, given Config::perf_model_file (`configured`):
  // that file; none for "none"; for "" (the default) default_file() when a GPU is present
  // (`gpu`), else none. Emulated devices are for tests, whose speeds a program sets itself: a
  // model of them kept from one run to the next would mislead.
  static std::string file_to_keep(const std::string& configured, bool gpu);

 private:
  static constexpr int window = 16;
  struct Entry {
    std::array<double, window> samples{};
    int count = 0;  // samples recorded (the window keeps the last `window`)
    double median = 0;
    double low = 0, high = 0;  // quartiles
  };
  // The sizes seen of one (task type, device kind), in order, so that a size without samples is
  // estimated from its nearest neighbours with samples: on the straight line through the two
  // nearest in log-log space (a power law, as the work of most kernels is in their size), or in
  // proportion to the one size there is.
  struct Curve {
    std::map<std::size_t, Entry> sizes;
    int samples = 0;       // recorded, over all sizes (each size counting at most `window`)
    int exploring = 0;     // claimed explorations not yet recorded
    bool settled = false;  // calibrated early by settle_if_far_slower
    bool calibrated() const { return samples >= calibration_samples || settled; }
    // The lowest and highest median time per unit of size over the sizes with samples.
    std::pair<double, double> rates() const;
    // The estimate at `size`: once calibrated, or with `provisional`, once a run has ended.
    std::optional<Spread> at(std::size_t size, bool provisional = false) const;
  };
  // (type name, kind): looked up with a view of the name, stored with its own copy.
  struct Key {
    std::string type;
    DeviceKind kind;
  };
  struct KeyView {
    std::string_view type;
    DeviceKind kind;
  };
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(const KeyView& k) const {
      return std::hash<std::string_view>()(k.type) ^ (static_cast<std::size_t>(k.kind) << 56);
    }
    std::size_t operator()(const Key& k) const { return (*this)(KeyView{k.type, k.kind}); }
  };
  struct KeyEqual {
    using is_transparent = void;
    static KeyView view(const Key& k) { return {k.type, k.kind}; }
    static KeyView view(const KeyView& k) { return k; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      const KeyView x = view(a), y = view(b);
      return x.kind == y.kind && x.type == y.type;
    }
  };
  // The curves are spread over shards by key, each with its own lock, so that devices and CPU
  // workers recording and estimating different task types do not queue behind one mutex.
  static constexpr std::size_t shard_count = 16;
  struct alignas(64) Shard {
    mutable Mutex mutex;
    std::unordered_map<Key, Curve, KeyHash, KeyEqual> curves VERSA_GUARDED_BY(mutex);
  };
  Shard& shard_of(const KeyView& key) { return shards_[KeyHash()(key) % shard_count]; }
  // The curve of `key` in `shard`, created when `create`; null when absent.
  static Curve* find(Shard& shard, const KeyView& key, bool create) VERSA_REQUIRES(shard.mutex);
  static void add_sample(Curve& curve, Entry& entry, double seconds);

  std::array<Shard, shard_count> shards_;
};

}  // namespace versa::detail
