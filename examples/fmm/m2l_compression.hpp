// The M2L operators of the Chebyshev FMM compressed by SVD, as bbFMM does (Fong & Darve, "The
// black-box fast multipole method", J. Comput. Phys. 228, 2009, section 3.3; also ScalFMM's
// Chebyshev kernel).
//
// K_d (p^3 x p^3) is the matrix of 1/r between the nodes of a unit target cell and those of the
// unit source cell at offset d, for the 316 offsets of the V list. With W the diagonal of the
// Chebyshev weights prod_k (1 - x_k^2)^(1/4) (so that W^2 is the tensor Chebyshev quadrature
// weight, and the SVD approximates the continuous operator in L2 rather than the node values),
// the weighted operators W K_d W share one orthonormal basis U (p^3 x r): the dominant
// eigenvectors of sum_d (W K_d W)(W K_d W)^T. Since K_{-d} = K_d^T, the same U spans both their
// columns and their rows, so that
//   K_d ~= V C_d V^T,  V = W^-1 U (p^3 x r),  C_d = U^T W K_d W U (r x r).
// A multipole M is compressed once to V^T M, each M2L is an r x r product, and a compressed
// local L_c is expanded once by V L_c. The Gram sum is built from the 16 canonical offsets (the
// others are the same matrices with the nodes permuted by a symmetry of the cube), and so is
// each C_d: the symmetry's node permutation P maps U onto U Q up to the truncation error, with
// Q = U^T P^T U, so C_d = Q^T C_canonical Q.
//
// The C_d have a much lower numerical rank than the common basis: each one couples two cells
// only, the basis all 316 offsets at once (at order 7, about 21 of 127 at 1e-7 of their own
// largest singular value). So each C_canonical is truncated by its own SVD to C ~= L R^T
// (r x k each) where that saves work (2k < r), and C_d = (Q^T L)(Q^T R)^T: an M2L costs 4 r k
// operations instead of 2 r^2: the "ArCmp" variant of Messner, Bramas, Coulaud & Darve,
// "Optimized M2L kernels for the Chebyshev interpolation based fast multipole method" (research
// report hal-00746089, 2012), which ScalFMM's Chebyshev kernel also offers.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace fmm {

class CompressedM2L {
 public:
  // Builds the operators of order p from the Chebyshev nodes of [-1, 1] (nodes_1d, p values),
  // keeping the singular values above `threshold` times the largest, threshold in [0, 1). With
  // threshold 0 nothing is compressed: rank() is p^3, compress and expand copy, and each M2L
  // goes through its canonical p^3 x p^3 operator with the nodes permuted.
  CompressedM2L(const std::vector<double>& nodes_1d, double threshold);

  std::size_t rank() const { return rank_; }
  // The singular values of the stacked weighted operators [W K_d W]_d, largest first (p^3).
  const std::vector<double>& singular_values() const { return singular_values_; }

  // compressed[j] = V^T multipoles[j] for `count` consecutive expansions (p^3 values in,
  // rank() values out each): one matrix product.
  void compress(const double* multipoles, double* compressed, std::size_t count) const;
  // locals[j] += V compressed[j] for `count` consecutive expansions.
  void expand(const double* compressed, double* locals, std::size_t count) const;
  // targets[j] += C_d sources[j] / width for the offset d = (dx, dy, dz), compressed vectors.
  void m2l(int dx, int dy, int dz, double width, const double* const* sources,
           double* const* targets, std::size_t count) const;

  // V = W^-1 U (row-major p^3 x rank()) of compress and expand; empty without compression.
  const std::vector<double>& expansion() const { return expansion_; }

  // The mean rank of the truncated C_d over the 316 offsets (rank() for one kept whole); 0
  // without compression.
  double mean_operator_rank() const;

  // The C_d for a device kernel, as they are stored (steps::M2LOperators, kernel_steps.hpp): for
  // each of the 343 offset slots (offset_index), its rank k (0 for the 27 near offsets, r for one
  // kept whole) and the index where its values start, two doubles per slot; then the values of
  // each: a whole C_d column-major (element (i, m) at m r + i), a truncated one as R row-major
  // (r x k, element (m, q) at m k + q) followed by L column-major (r x k, element (i, q) at
  // q r + i), so that threads taking consecutive q, then consecutive i, read consecutive values.
  // Empty when the C_d are not stored (over stored_operators_budget, or without compression).
  std::vector<double> device_operators() const;
  // The index of offset d in device_operators() and in the M2L work lists.
  static int offset_index(int dx, int dy, int dz) { return ((dx + 3) * 7 + dy + 3) * 7 + dz + 3; }

 private:
  // The canonical offset of d (0 <= a <= b <= c <= 3, c >= 2) and the node permutation of the
  // cube symmetry that maps d onto it: K_d[m][n] = K_canonical[permutation[m]][permutation[n]].
  struct Symmetry {
    int canonical;
    std::vector<std::size_t> permutation;
  };
  Symmetry symmetry(int dx, int dy, int dz) const;
  // The weighted operator W K W of the canonical offset (a, b, c), row-major p^3 x p^3.
  std::vector<double> weighted_operator(int a, int b, int c) const;
  // The M2L of the uncompressed operators (threshold 0).
  void uncompressed_m2l(int dx, int dy, int dz, double width, const double* const* sources,
                        double* const* targets, std::size_t count) const;
  // The basis U (row-major p^3 x rank_), rank_ and singular_values_ from the threshold.
  std::vector<double> compute_basis(double threshold);
  // sum_d P_d F_c F_c^T P_d^T over the 316 offsets d, F_c = canonical_factor(c) (p^3 x p^3) for
  // the canonical offset c of d and P_d its node permutation: row-major p^3 x p^3.
  std::vector<double> symmetric_gram(
      const std::function<std::vector<double>(std::size_t)>& canonical_factor) const;
  // An orthonormal basis (row-major p^3 x k) of a subspace invariant under the cube's
  // symmetries and close to the span of the `columns` orthonormal columns of `basis`.
  std::vector<double> invariant_subspace(const std::vector<double>& basis,
                                         std::size_t columns) const;
  // The node permutations of the 48 symmetries of the cube.
  std::vector<std::vector<std::size_t>> cube_symmetries() const;

  // The C_canonical (truncated at `threshold` of their largest singular value), the rotations Q
  // and, if they fit in stored_operators_budget, the C_d.
  void build_operators(const std::vector<double>& basis, double threshold);

  // Below this relative singular value, the basis is computed in two stages (compute_basis).
  static constexpr double deflation_threshold = 1e-6;
  // The largest memory (bytes) the 316 C_d may take; beyond it they are applied as
  // Q^T C_canonical Q, three products instead of one.
  static constexpr std::size_t stored_operators_budget = std::size_t{1} << 30;

  std::size_t p_, nodes_, rank_ = 0;
  std::vector<double> nodes_1d_;
  std::vector<double> weights_;  // the diagonal of W, p^3
  std::vector<double> singular_values_;
  std::vector<double> expansion_;  // V = W^-1 U, row-major p^3 x rank
  // Where offset d's operator comes from, at offset_index(d): C_d = Q^T C_canonical Q with
  // Q = rotations_[rotation], or C_canonical itself when rotation is -1.
  struct Placement {
    int canonical = -1;
    int rotation = -1;
  };
  std::vector<Placement> placements_;
  // An r x r operator C, either whole (row-major) or, where its numerical rank k is below r / 2,
  // as C ~= left right^T with two row-major r x k factors.
  struct Operator {
    std::size_t rank = 0;  // k, or r when whole
    std::vector<double> whole;
    std::vector<double> left, right;

    std::size_t doubles() const { return whole.size() + left.size() + right.size(); }
    // rows x r `out` = `in` C^T / width for the rows x r `in` (each row one vector C acts on);
    // `scratch` holds rows x rank.
    void apply(std::size_t rows, std::size_t r, double width, const double* in, double* out,
               double* scratch) const;
  };
  // C_d for each offset at offset_index(d) (empty for the near offsets), when the 316 of them fit
  // in stored_operators_budget; otherwise empty, and each M2L goes through the 16 canonical C and
  // the rotations Q (row-major rank x rank).
  std::vector<Operator> operators_;
  std::vector<Operator> canonical_operators_;
  std::vector<std::vector<double>> rotations_;
  // Without compression: the unweighted K of the 16 canonical offsets, row-major p^3 x p^3.
  std::vector<std::vector<double>> canonical_;
};

}  // namespace fmm
