// Tunes the leaf size over repeated evaluations of slowly moving points, as Holm, Engblom, Goude
// and Holmgren did for the 2-D FMM on CPU + GPU (SISC 36, 2014): the leaf size trades the near
// field (P2P, which grows with it) against the far field (M2L and the tree, which shrink), and
// where they balance depends on the machine, the devices and the points. The tuner walks the
// leaf size by a factor per evaluation, downhill in measured time; when a step makes things
// worse it turns back with a smaller factor, and settles on the best size seen once the factor
// is below 5%.
//
//   fmm::LeafTuner tuner(64);
//   for (...) { solver = solver.with_leaf_size(tuner.leaf_size()); time it; tuner.record(s); }
#pragma once

#include <cstddef>

namespace fmm {

class LeafTuner {
 public:
  // Throws std::invalid_argument when initial is 0.
  explicit LeafTuner(std::size_t initial);

  // The leaf size to evaluate with next.
  std::size_t leaf_size() const { return current_; }
  // The fastest leaf size measured so far and its time (0 before any record).
  std::size_t best_leaf_size() const { return best_; }
  double best_seconds() const { return best_seconds_; }
  bool settled() const { return factor_ < 1.05; }

  // Records the time of an evaluation at leaf_size() and chooses the next.
  void record(double seconds);

 private:
  std::size_t current_, best_;
  double best_seconds_ = 0;
  double previous_seconds_ = 0;
  double factor_ = 1.5;
  bool growing_ = true;
  bool first_ = true;
};

}  // namespace fmm
