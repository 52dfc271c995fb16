// How far an FMM result is from the direct sum: relative L2 errors of the potential and of the
// field, over all points or, for large N where the O(N^2) reference is too slow, at a sample of
// targets against an exact sum over all sources.
//
//   const fmm::Errors e = fmm::sampled_errors(points, solver.evaluate(points), 1000);
//   // e.potential, e.field, over e.targets targets
#pragma once

#include <cstddef>
#include <vector>

#include "points.hpp"

namespace fmm {

// ||value - reference|| / ||reference|| in the 2-norm; the absolute error when the reference is
// zero. Precondition: the two have the same length.
double relative_l2_error(const std::vector<double>& value, const std::vector<double>& reference);

// The same for the field, over its three components together.
double field_relative_l2_error(const Potentials& value, const Potentials& reference);

struct Errors {
  double potential = 0;     // relative L2 error of the potential
  double field = 0;         // relative L2 error of the field (all three components)
  std::size_t targets = 0;  // how many points the errors were measured at
};

// Both errors of `value` against `reference`, at every point.
Errors errors(const Potentials& value, const Potentials& reference);

// Whether `result`, evaluated in another order of summation (tasks, ranks), equals `sequential`,
// the same operators summed sequentially (Solver::evaluate), up to rounding: a relative
// difference of at most 1e-12 in both. Prints the differences and the verdict on a line.
bool equals_sequential(const Potentials& result, const Potentials& sequential);

// The indices of `samples` targets spread evenly over [0, n): one in each of `samples` equal bins,
// at an offset within its bin that cycles with the bin's number, so that a set generated round
// robin (blobs puts point i in blob i % 8) is sampled in every part, which a fixed stride of 100
// would not do. All n, in order, when samples >= n.
std::vector<std::size_t> sample_targets(std::size_t n, std::size_t samples);

// The potential and field at points[targets[k]] from all the points, exactly (up to rounding), in
// the order of `targets`; pairs at zero distance are left out, as in direct_sum.
Potentials direct_sum_at(const Points& points, const std::vector<std::size_t>& targets);

// The potential and field at each of the `targets` from all the `sources`, exactly (up to
// rounding); pairs at zero distance are left out.
Potentials direct_sum_at(const Points& sources, const Points& targets);

// The entries of `result` at `targets`, in that order. Precondition: every target < result.size().
Potentials at_targets(const Potentials& result, const std::vector<std::size_t>& targets);

// The errors of `result` (an evaluation of `points`) at sample_targets(n, samples)
// against direct_sum_at those targets: O(samples N) work. With samples >= N it equals
// errors(result, direct_sum(points)).
Errors sampled_errors(const Points& points, const Potentials& result, std::size_t samples);
// The same for `result`, an evaluation of `sources` at every one of `targets`.
Errors sampled_errors(const Points& sources, const Points& targets, const Potentials& result,
                      std::size_t samples);

}  // namespace fmm
