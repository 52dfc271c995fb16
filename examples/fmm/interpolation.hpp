// The operators of a kernel-independent FMM by Chebyshev interpolation (bbFMM: Fong & Darve,
// "The black-box fast multipole method", J. Comput. Phys. 228, 2009), for the Laplace kernel
// 1/r. A cell's expansion is a vector of p^3 values, one per tensor Chebyshev node of the cell:
// a multipole expansion holds the charges anterpolated onto the nodes, a local expansion the
// potential of far sources at the nodes, interpolated back to the points.
//
// M2L is a p^3 x p^3 matrix of kernel values between the nodes of two cells of the same level,
// which depends only on their offset (316 offsets in [-3, 3]^3 that do not touch) and on the cell
// width. 1/r is homogeneous of degree -1, so one set for a unit cell serves every level (divided
// by the width). The matrices are compressed by SVD onto one basis of rank r < p^3
// (m2l_compression.hpp), so that each M2L is an r x r product between compressed expansions.
// Dense matrix products are what a GPU does well.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "m2l_compression.hpp"

namespace fmm {

class ChebyshevInterpolation {
 public:
  // Precomputes the operators of order p (p nodes per dimension), p in [2, 16].
  explicit ChebyshevInterpolation(int order);

  int order() const { return order_; }
  std::size_t nodes() const { return node_count_; }  // p^3
  // The Chebyshev nodes cos((2m + 1) pi / 2p) in [-1, 1], m = 0..p-1.
  const std::vector<double>& nodes_1d() const { return nodes_1d_; }

  // The p^3 node positions of the cell with this center and half-width, node index
  // (a p + b) p + c for x node a, y node b, z node c.
  void node_positions(const double center[3], double half_width, double* x, double* y,
                      double* z) const;

  // P2M: adds the charges q of the n points (x, y, z) to the multipole expansion of the cell.
  void p2m(const double center[3], double half_width, const double* x, const double* y,
           const double* z, const double* q, std::size_t n, double* multipole) const;
  // M2M: adds a child's multipole to its parent's; octant bits (x << 2 | y << 1 | z) say on
  // which side of the parent's center the child lies.
  void m2m(unsigned octant, const double* child, double* parent) const;
  // M2L acts on compressed expansions of rank() values per cell (rank() <= p^3): each cell's
  // multipole is compressed once after the upward pass, every M2L product maps compressed
  // vectors to compressed vectors, and each cell's compressed local is expanded once before the
  // downward pass. Compressed vectors are the unit of M2L data: what an M2L task reads and writes.
  std::size_t rank() const { return m2l_->rank(); }
  // compressed (rank() values) = the compression of a complete multipole (p^3 values).
  void compress(const double* multipole, double* compressed) const;
  // local (p^3 values) += the expansion of a compressed local (rank() values).
  void expand(const double* compressed, double* local) const;
  // The same for `count` consecutive cells' expansions, as one matrix product.
  void compress(const double* multipoles, double* compressed, std::size_t count) const;
  void expand(const double* compressed, double* locals, std::size_t count) const;
  // The relative singular value threshold of the M2L compression at order p: 10^-p, which adds
  // at most about 1% to the interpolation error up to p = 13 (docs/fmm.md); 1e-13 at p = 14,
  // since 1e-14 lies at the ~1e-14 the basis is resolved to (and 1e-13 is still a small part of
  // that order's ~1e-11 error); 0 (no compression) beyond.
  static double compression_threshold(int order);
  // The M2L of `count` pairs of same-level cells of width `width` at one integer offset
  // (dx, dy, dz) = source - target, max |d| in {2, 3}: targets[j] += M2L(sources[j]), compressed
  // vectors. The pairs go through the operator in blocks of columns (a matrix product), so the
  // operator is read once per block rather than once per pair. A target may appear more than
  // once.
  void m2l(int dx, int dy, int dz, double width, const double* const* sources,
           double* const* targets, std::size_t count) const;
  // The compressed M2L operators for a device (CompressedM2L::device_operators): empty when
  // they are not stored one per offset.
  std::vector<double> m2l_operators() const { return m2l_->device_operators(); }
  // The mean rank of the truncated M2L operators over the 316 offsets (CompressedM2L).
  double mean_m2l_operator_rank() const { return m2l_->mean_operator_rank(); }
  // The operators of P2M, M2M, L2L, L2P, compression and expansion for the device kernels, in
  // the layout of steps::Tables (kernel_steps.hpp).
  std::vector<double> device_tables() const;
  // L2L: adds a parent's local expansion to its child's.
  void l2l(unsigned octant, const double* parent, double* child) const;
  // L2P: adds the interpolated potential and its gradient at n points.
  void l2p(const double center[3], double half_width, const double* local, const double* x,
           const double* y, const double* z, std::size_t n, double* potential, double* gx,
           double* gy, double* gz) const;

 private:
  // S_p(xi, x_m) for each node m into s; with derivative, also d/dxi into ds.
  void basis(double xi, double* s) const;
  void basis_and_derivative(double xi, double* s, double* ds) const;
  // out[i] += sum_j A_x[i1 j1] A_y[i2 j2] A_z[i3 j3] in[j], each A a p x p matrix.
  void apply_tensor(const double* ax, const double* ay, const double* az, const double* in,
                    double* out) const;

  int order_;
  std::size_t node_count_;
  std::vector<double> nodes_1d_;
  std::vector<double> chebyshev_at_nodes_;  // T_k(x_m), [k p + m]
  // child_to_parent_[side][n p + m] = S_p(x_m / 2 -+ 1/2, x_n): parent node n, child node m,
  // side 0 for the lower half; parent_to_child_ is its transpose.
  std::vector<double> child_to_parent_[2], parent_to_child_[2];
  std::unique_ptr<const CompressedM2L> m2l_;
};

}  // namespace fmm
