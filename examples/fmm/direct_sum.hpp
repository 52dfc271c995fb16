// The exact O(N M) Laplace interactions: the FMM's near-field operator (P2P) and the reference
// that the tests compare the FMM with.
#pragma once

#include <cstddef>

#include "points.hpp"

namespace fmm {

// Adds to (potential, gx, gy, gz)[t] for each of the nt targets the potential and gradient of the
// ns weighted sources; pairs at zero distance contribute nothing. M2P uses it with the nodes of a
// multipole expansion as the sources.
void add_potential_and_field(const double* tx, const double* ty, const double* tz, std::size_t nt,
                             const double* sx, const double* sy, const double* sz,
                             const double* weight, std::size_t ns, double* potential, double* gx,
                             double* gy, double* gz);

// Adds to potential[t] for each of the nt targets the potential of the ns weighted sources. P2L
// uses it with the nodes of a local expansion as the targets.
void add_potential(const double* tx, const double* ty, const double* tz, std::size_t nt,
                   const double* sx, const double* sy, const double* sz, const double* weight,
                   std::size_t ns, double* potential);

// Adds to result[t] for targets t in [target_begin, target_end) the potential and field of the
// sources s in [source_begin, source_end), both ranges indices into `points`. Pairs at zero
// distance contribute nothing. The ranges may overlap (a leaf with itself).
void add_direct_interactions(const Points& points, std::size_t target_begin, std::size_t target_end,
                             std::size_t source_begin, std::size_t source_end, Potentials& result);

// The potential and field at every point from all the others, exactly (up to rounding).
Potentials direct_sum(const Points& points);

}  // namespace fmm
