// The input and the output of the fast multipole method: sources with charges, and the Laplace
// potential and its gradient at each of them.
#pragma once

#include <cstddef>
#include <vector>

namespace fmm {

// N points with charges, structure of arrays: the loops over sources vectorise, and a later GPU
// kernel reads each coordinate coalesced. All four vectors have the same length.
struct Points {
  std::vector<double> x, y, z, charge;

  std::size_t size() const { return x.size(); }
};

// What the method computes at each point i:
//   potential[i] = sum over j with |x_i - x_j| > 0 of charge[j] / |x_i - x_j|
//   field[i]     = the gradient of that sum with respect to x_i (not its negative).
// Pairs at zero distance are left out, which excludes each point's own charge and makes
// coincident points well defined.
struct Potentials {
  std::vector<double> potential, field_x, field_y, field_z;

  explicit Potentials(std::size_t n = 0) : potential(n), field_x(n), field_y(n), field_z(n) {}
  std::size_t size() const { return potential.size(); }
};

}  // namespace fmm
