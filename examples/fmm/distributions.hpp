// The point sets that the tests and the tool run the FMM on: uniform in the unit cube, clustered
// (Gaussian blobs, a deep and uneven tree) and on a sphere surface (a 2-D set in 3-D). Charges are
// uniform in [-1, 1], so that potentials cancel partly, as in a plasma or a molecule.
//
//   const fmm::Points points = fmm::make_points(fmm::parse_distribution("blobs"), 100000, 1);
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

#include "points.hpp"

namespace fmm {

enum class Distribution {
  uniform,  // uniform in the unit cube
  blobs,    // 8 Gaussian blobs of widths 1e-3 to 3e-2 at random centers in the unit cube
  sphere,   // uniform on the unit sphere's surface
};

// Reads "uniform", "blobs" or "sphere". Throws std::invalid_argument quoting the name and listing
// the valid ones otherwise.
Distribution parse_distribution(const std::string& name);

// The name that parse_distribution reads back.
const char* to_string(Distribution distribution);

// n points of `distribution` with charges uniform in [-1, 1]; the same (n, seed) gives the same
// points on every run and platform that has the same <random> normal distribution.
Points make_points(Distribution distribution, std::size_t n, std::uint64_t seed);

// Appends the point (x, y, z) to `points` with a charge drawn uniformly from [-1, 1]: for point
// sets built elsewhere (the tests' degenerate ones) with the same charges as make_points's.
void add_point(Points& points, double x, double y, double z, std::mt19937_64& random);

}  // namespace fmm
