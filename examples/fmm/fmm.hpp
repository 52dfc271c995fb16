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

#include "points.hpp"

namespace fmm {

struct Options {
  // The relative L2 error of the potential asked for, in [1e-10, 1e-3]; it chooses the
  // interpolation order (order_for_accuracy). The field's error is about 10 times larger.
  double eps = 1e-6;
  // A cell with more points than this is split (down to the 21st level).
  std::size_t leaf_size = 64;
};

// The Chebyshev order p whose measured relative L2 error of the potential is at most eps (eps
// rounded down to a decade; see docs/fmm.md). Throws std::invalid_argument when eps is not in
// [1e-10, 1e-3].
int order_for_accuracy(double eps);

// The seconds that one evaluation spent in each of its passes.
struct PhaseTimes {
  double tree = 0;          // the octree and the interaction lists
  double upward = 0;        // P2M and M2M
  double interactions = 0;  // M2L, P2L, M2P and P2P
  double downward = 0;      // L2L, L2P and the reordering into the input's order

  double total() const { return tree + upward + interactions + downward; }
};

class ChebyshevInterpolation;  // interpolation.hpp

// The FMM at one accuracy. Its operators (the M2L matrices take p^6 kernel evaluations each) are
// built at construction and only read by evaluate, which may be called from several threads.
class Solver {
 public:
  // Throws std::invalid_argument when eps is out of range or leaf_size is 0.
  explicit Solver(const Options& options = {});
  // An explicit order p in [2, 16]; for measuring the accuracy of each order.
  static Solver with_order(int order, std::size_t leaf_size);

  // The potential and field (gradient of the potential) at every point from all the others.
  // Throws std::invalid_argument naming the problem when there are no points, the four arrays
  // differ in length, or a coordinate or charge is not finite.
  Potentials evaluate(const Points& points) const;
  // The same, also reporting the time of each pass in `times` (a few clock reads).
  Potentials evaluate(const Points& points, PhaseTimes& times) const;

  int order() const;

 private:
  Solver(int order, std::size_t leaf_size);

  std::size_t leaf_size_;  // checked before the operators are built
  std::shared_ptr<const ChebyshevInterpolation> interpolation_;
};

// One evaluation: Solver(options).evaluate(points).
Potentials evaluate(const Points& points, const Options& options = {});

// One evaluation at an explicit order: Solver::with_order(order, leaf_size).evaluate(points).
Potentials evaluate_with_order(const Points& points, int order, std::size_t leaf_size);

}  // namespace fmm
