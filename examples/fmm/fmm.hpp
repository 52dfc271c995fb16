// A 3-D Laplace fast multipole method (kernel 1/r): the potential and its gradient at N charged
// points in O(N) work, serial. The tree is an adaptive octree (octree.hpp), the far field is
// handled by Chebyshev interpolation (interpolation.hpp) and the adaptive interaction lists
// (interaction_lists.hpp); see docs/fmm.md.
//
//   fmm::Points points{x, y, z, charge};
//   fmm::Potentials result = fmm::evaluate(points, {.eps = 1e-6});
//   // result.potential[i], result.field_x[i], ... in the order of the input
//
// Repeated evaluations at one accuracy keep their operators in a Solver:
//   const fmm::Solver solver({.eps = 1e-6});
//   for (...) result = solver.evaluate(points);
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "group_tree.hpp"
#include "octree.hpp"
#include "points.hpp"

namespace fmm {

struct Options {
  // The relative L2 error of the potential asked for, in [3e-11, 1e-3]; it chooses the
  // interpolation order (order_for_accuracy). The field's error is about 10 times larger.
  double eps = 1e-6;
  // A cell with more points than this is split (down to the 21st level). Unset: the size
  // measured fastest at eps's order (leaf_size_for_order).
  std::optional<std::size_t> leaf_size = std::nullopt;
  // Cells per cell group and leaves per particle group of the task program (group_tree.hpp).
  std::size_t group_size = default_group_size;
};

// The Chebyshev order p whose measured relative L2 error of the potential is at most eps (eps
// rounded down to a decade; see docs/fmm.md). Throws std::invalid_argument when eps is not in
// [3e-11, 1e-3].
int order_for_accuracy(double eps);

// The leaf size with which an evaluation at interpolation order p was measured fastest (on
// uniform and clustered points, 10^5 and 10^6 of them; docs/fmm.md): higher orders make the far
// field dearer per cell, so they take bigger leaves. Throws std::invalid_argument for an order
// outside [2, 16].
std::size_t leaf_size_for_order(int order);

// The seconds that one evaluation spent in each of its passes. Run as tasks, the passes
// overlap: each figure is then the kernel time of the pass's tasks summed over the workers.
struct PhaseTimes {
  double tree = 0;      // the octree, the interaction lists and the groups
  double upward = 0;    // P2M, M2M and compression
  double m2l = 0;       // the far field: M2L, P2L and M2P
  double p2p = 0;       // the near field
  double downward = 0;  // expansion, L2L, L2P and the reordering into the input's order

  double total() const { return tree + upward + m2l + p2p + downward; }
  void add(Pass pass, double seconds);
};

class ChebyshevInterpolation;  // interpolation.hpp

// The FMM at one accuracy. Its operators (the M2L matrices take p^6 kernel evaluations each) are
// built at construction and only read by evaluate, which may be called from several threads.
class Solver {
 public:
  // Throws std::invalid_argument when eps is out of range, leaf_size or group_size is 0.
  explicit Solver(const Options& options = {});
  // An explicit order p in [2, 16]; for measuring the accuracy of each order.
  static Solver with_order(int order, std::size_t leaf_size);

  // The octree of `points` and its group tree (the tasks of an evaluation), as every evaluation
  // by this solver builds them, on whichever runtime. Throws like evaluate on bad points.
  struct Plan {
    Octree tree;
    GroupTree groups;
  };
  Plan plan(const Points& points) const;

  // The potential and field (gradient of the potential) at every point from all the others.
  // Throws std::invalid_argument naming the problem when there are no points, the four arrays
  // differ in length, or a coordinate or charge is not finite.
  Potentials evaluate(const Points& points) const;
  // The same, also reporting the time of each pass in `times` (a few clock reads).
  Potentials evaluate(const Points& points, PhaseTimes& times) const;
  // The potential and field of the charged `sources` at the `targets` (whose charges are
  // ignored), in the order of the targets; a target at the position of a source gets nothing
  // from it. Evaluated as one set with the targets' charges set to 0.
  Potentials evaluate(const Points& sources, const Points& targets, PhaseTimes& times) const;

  int order() const;
  // This solver with another leaf size, sharing the operators. Throws std::invalid_argument
  // when leaf_size is 0.
  Solver with_leaf_size(std::size_t leaf_size) const;
  std::size_t leaf_size() const { return leaf_size_; }
  std::size_t group_size() const { return group_size_; }
  const ChebyshevInterpolation& operators() const { return *interpolation_; }

 private:
  Solver(int order, std::size_t leaf_size, std::size_t group_size);
  Solver(std::shared_ptr<const ChebyshevInterpolation> operators, std::size_t leaf_size,
         std::size_t group_size);

  std::size_t leaf_size_, group_size_;
  std::shared_ptr<const ChebyshevInterpolation> interpolation_;
};

// Throws std::invalid_argument naming the problem when there are no points, the four arrays
// differ in length, or a coordinate or charge is not finite.
void check_points(const Points& points);

// The sources followed by the targets with their charges 0: one point set whose evaluation
// gives the targets' results in its tail (results_at_targets). Throws like check_points.
Points sources_and_targets(const Points& sources, const Points& targets);
// The last `targets` results of `all`.
Potentials results_at_targets(const Potentials& all, std::size_t targets);

// One evaluation: Solver(options).evaluate(points).
Potentials evaluate(const Points& points, const Options& options = {});

// One evaluation at an explicit order: Solver::with_order(order, leaf_size).evaluate(points).
Potentials evaluate_with_order(const Points& points, int order, std::size_t leaf_size);

}  // namespace fmm
