// The measured cost of the links between memory nodes (host to device, device to device), kept
// in a file so that only a machine's first start pays for the measurements, as StarPU keeps its
// bus calibration. A backend keys each link by what identifies its ends across restarts (a
// GPU's UUID, not its ordinal, which CUDA_VISIBLE_DEVICES may change), so a changed machine
// measures its new links and keeps the rest.
//
// The file is text, one link per line: "<key> <bytes per second> <seconds per copy>". It is
// replaced as a whole (written aside, then renamed), so that processes starting together on
// one machine, the ranks of an MPI job, never read a half-written file.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace versa::detail {

struct LinkCost {
  double bandwidth = 0;  // bytes per second
  double latency = 0;    // seconds per copy
};

class LinkCosts {
 public:
  // Reads `path` when it exists. A line that does not parse is ignored (its link is measured
  // again), never fatal: the file only saves time. An empty path keeps nothing.
  explicit LinkCosts(std::string path);

  // The cost recorded for `key` (no whitespace), if any.
  std::optional<LinkCost> find(const std::string& key) const;
  // Records `cost` for `key`, to be written by save().
  void put(const std::string& key, LinkCost cost);
  // Writes the file when put() changed it. Returns "" or why it could not (the caller says so,
  // once: the measurements are simply repeated at the next start).
  std::string save() const;

  // Where the file is kept by default: $XDG_CACHE_HOME/versa/link-costs, else
  // $HOME/.cache/versa/link-costs; "" when neither variable is set.
  static std::string default_path();

 private:
  std::string path_;
  std::vector<std::pair<std::string, LinkCost>> costs_;
  bool changed_ = false;
};

}  // namespace versa::detail
