// Files through which another program (a peer FMM in the benchmark) evaluates exactly the points
// the tool evaluated and compares with exactly the tool's reference, without redoing the direct
// sum. Both are a 16- or 24-byte header followed by raw little-endian arrays:
//
//   points:    "VFMMPTS1" (8 bytes), n (uint64), then x[n], y[n], z[n], charge[n] (float64)
//   reference: "VFMMREF1" (8 bytes), n (uint64, the number of points), m (uint64, the targets),
//              then index[m] (uint64, into the points), potential[m], field_x[m], field_y[m],
//              field_z[m] (float64; the direct sum of points.hpp at those targets)
//
//   fmm::save_points("uniform.points", points);
//   fmm::save_reference("uniform.ref", points.size(), targets, fmm::direct_sum_at(points,
//   targets));
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "points.hpp"

namespace fmm {

// Writes `points` to `path` in the points format above. The file appears whole or not at all: it
// is written under a temporary name in the same folder and renamed. Throws std::runtime_error,
// naming the path, when it cannot be written.
void save_points(const std::string& path, const Points& points);

// Writes the direct-sum `reference` at `targets` (indices into a set of `n` points, in the order
// of the reference's entries) to `path` in the reference format above, as save_points does.
// Precondition: reference.size() == targets.size().
void save_reference(const std::string& path, std::size_t n, const std::vector<std::size_t>& targets,
                    const Potentials& reference);

}  // namespace fmm
