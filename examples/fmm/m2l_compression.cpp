#include "m2l_compression.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace fmm {

namespace {

// The 16 canonical offsets 0 <= a <= b <= c <= 3 with c >= 2, in a fixed order.
std::vector<std::array<int, 3>> canonical_offsets() {
  std::vector<std::array<int, 3>> offsets;
  for (int a = 0; a <= 3; ++a)
    for (int b = a; b <= 3; ++b)
      for (int c = std::max(b, 2); c <= 3; ++c) offsets.push_back({a, b, c});
  return offsets;
}

// The 316 offsets of the V list: in [-3, 3]^3, not touching (max |d| >= 2).
std::vector<std::array<int, 3>> far_offsets() {
  std::vector<std::array<int, 3>> offsets;
  for (int dx = -3; dx <= 3; ++dx)
    for (int dy = -3; dy <= 3; ++dy)
      for (int dz = -3; dz <= 3; ++dz)
        if (std::max({std::abs(dx), std::abs(dy), std::abs(dz)}) >= 2)
          offsets.push_back({dx, dy, dz});
  return offsets;
}

// The eigenvalues of the symmetric n x n row-major `matrix`, largest first; on return its column
// k holds the eigenvector of the k-th.
std::vector<double> eigen_descending(std::vector<double>& matrix, std::size_t n) {
  std::vector<double> eigenvalues(n);
  const int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'L', static_cast<int>(n), matrix.data(),
                                  static_cast<int>(n), eigenvalues.data());
  if (info != 0)
    throw std::runtime_error("CompressedM2L: LAPACKE_dsyevd failed (" + std::to_string(info) + ")");
  std::reverse(eigenvalues.begin(), eigenvalues.end());
  for (std::size_t m = 0; m < n; ++m) std::reverse(&matrix[m * n], &matrix[m * n] + n);
  return eigenvalues;
}

// Replaces the columns of the row-major rows x columns `matrix` by an orthonormal basis of their
// span (QR, rows >= columns).
void orthonormalise(std::vector<double>& matrix, std::size_t rows, std::size_t columns) {
  std::vector<double> tau(columns);
  int info = LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, static_cast<int>(rows), static_cast<int>(columns),
                            matrix.data(), static_cast<int>(columns), tau.data());
  if (info == 0)
    info = LAPACKE_dorgqr(LAPACK_ROW_MAJOR, static_cast<int>(rows), static_cast<int>(columns),
                          static_cast<int>(columns), matrix.data(), static_cast<int>(columns),
                          tau.data());
  if (info != 0)
    throw std::runtime_error("CompressedM2L: QR failed (" + std::to_string(info) + ")");
}

}  // namespace

CompressedM2L::CompressedM2L(const std::vector<double>& nodes_1d, double threshold)
    : p_(nodes_1d.size()), nodes_(p_ * p_ * p_), nodes_1d_(nodes_1d) {
  if (!(threshold >= 0 && threshold < 1))
    throw std::invalid_argument("CompressedM2L: threshold " + std::to_string(threshold) +
                                " is outside [0, 1)");
  if (threshold == 0) {
    // No compression: the 16 canonical operators themselves (p^6 doubles each).
    rank_ = nodes_;
    weights_.assign(nodes_, 1.0);
    for (const auto& [a, b, c] : canonical_offsets())
      canonical_.push_back(weighted_operator(a, b, c));
    return;
  }
  weights_.resize(nodes_);
  for (std::size_t a = 0; a < p_; ++a)
    for (std::size_t b = 0; b < p_; ++b)
      for (std::size_t c = 0; c < p_; ++c) {
        const double w = (1 - nodes_1d_[a] * nodes_1d_[a]) * (1 - nodes_1d_[b] * nodes_1d_[b]) *
                         (1 - nodes_1d_[c] * nodes_1d_[c]);
        weights_[(a * p_ + b) * p_ + c] = std::sqrt(std::sqrt(w));
      }
  const std::vector<double> basis = compute_basis(threshold);
  const std::size_t n = nodes_, r = rank_;
  expansion_.resize(n * r);
  for (std::size_t m = 0; m < n; ++m)
    for (std::size_t k = 0; k < r; ++k) expansion_[m * r + k] = basis[m * r + k] / weights_[m];

  build_operators(basis, threshold);
}

// Procedure: build_operators
void CompressedM2L::build_operators(const std::vector<double>& basis, double threshold) {
  const std::size_t n = nodes_, r = rank_;
  const int ri = static_cast<int>(r);
  // C_canonical = U^T (W K W) U for the 16 canonical offsets, truncated by its SVD.
  std::vector<double> product(n * r), whole(r * r), singular(r), u(r * r), vt(r * r);
  for (const auto& [a, b, c] : canonical_offsets()) {
    const std::vector<double> k = weighted_operator(a, b, c);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), ri,
                static_cast<int>(n), 1.0, k.data(), static_cast<int>(n), basis.data(), ri, 0.0,
                product.data(), ri);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ri, ri, static_cast<int>(n), 1.0,
                basis.data(), ri, product.data(), ri, 0.0, whole.data(), ri);
    Operator op;
    std::vector<double> factored = whole;
    const int info = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'S', ri, ri, factored.data(), ri,
                                    singular.data(), u.data(), ri, vt.data(), ri);
    if (info != 0)
      throw std::runtime_error("CompressedM2L: LAPACKE_dgesdd failed (" + std::to_string(info) +
                               ")");
    std::size_t rank = 0;
    while (rank < r && singular[rank] > threshold * singular[0]) ++rank;
    if (2 * rank < r) {
      // left = U_k S_k, right = V_k (r x k each).
      op.rank = rank;
      op.left.resize(r * rank);
      op.right.resize(r * rank);
      for (std::size_t i = 0; i < r; ++i)
        for (std::size_t j = 0; j < rank; ++j) {
          op.left[i * rank + j] = u[i * r + j] * singular[j];
          op.right[i * rank + j] = vt[j * r + i];
        }
    } else {
      op.rank = r;
      op.whole = whole;
    }
    canonical_operators_.push_back(std::move(op));
  }
  // Q = U^T P^T U once per symmetry other than the identity (the canonical offsets themselves).
  std::map<std::vector<std::size_t>, int> rotation_of;
  std::vector<double> permuted(n * r);
  placements_.assign(343, Placement{});
  std::size_t stored_doubles = 0;
  for (const auto& [dx, dy, dz] : far_offsets()) {
    const Symmetry s = symmetry(dx, dy, dz);
    Placement& placement = placements_[static_cast<std::size_t>(offset_index(dx, dy, dz))];
    placement.canonical = s.canonical;
    stored_doubles += canonical_operators_[static_cast<std::size_t>(s.canonical)].doubles();
    bool identity = true;
    for (std::size_t m = 0; m < n && identity; ++m) identity = s.permutation[m] == m;
    if (identity) continue;
    auto [it, inserted] =
        rotation_of.try_emplace(s.permutation, static_cast<int>(rotations_.size()));
    placement.rotation = it->second;
    if (!inserted) continue;
    // (P^T U)[permutation[m]] = U[m]
    for (std::size_t m = 0; m < n; ++m)
      std::copy(&basis[m * r], &basis[m * r] + r, &permuted[s.permutation[m] * r]);
    std::vector<double> q(r * r);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ri, ri, static_cast<int>(n), 1.0,
                basis.data(), ri, permuted.data(), ri, 0.0, q.data(), ri);
    rotations_.push_back(std::move(q));
  }
  if (stored_doubles * sizeof(double) > stored_operators_budget) return;
  // Small enough: C_d = Q^T C_canonical Q for each offset, whole or as the factors Q^T left and
  // Q^T right, so that an M2L is one product or two thin ones.
  const auto rotate = [&](const std::vector<double>& q, const std::vector<double>& from,
                          std::size_t columns) {
    std::vector<double> to(r * columns);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ri, static_cast<int>(columns), ri, 1.0,
                q.data(), ri, from.data(), static_cast<int>(columns), 0.0, to.data(),
                static_cast<int>(columns));
    return to;
  };
  operators_.resize(343);
  for (const auto& [dx, dy, dz] : far_offsets()) {
    const std::size_t index = static_cast<std::size_t>(offset_index(dx, dy, dz));
    const Placement& placement = placements_[index];
    const Operator& c = canonical_operators_[static_cast<std::size_t>(placement.canonical)];
    Operator& op = operators_[index];
    if (placement.rotation < 0) {
      op = c;
      continue;
    }
    const std::vector<double>& q = rotations_[static_cast<std::size_t>(placement.rotation)];
    op.rank = c.rank;
    if (c.whole.empty()) {
      op.left = rotate(q, c.left, c.rank);
      op.right = rotate(q, c.right, c.rank);
      continue;
    }
    std::vector<double> half(r * r);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ri, ri, ri, 1.0, c.whole.data(), ri,
                q.data(), ri, 0.0, half.data(), ri);
    op.whole = rotate(q, half, r);
  }
  canonical_operators_.clear();
  rotations_.clear();
}

void CompressedM2L::Operator::apply(std::size_t rows, std::size_t r, double width, const double* in,
                                    double* out, double* scratch) const {
  const int m = static_cast<int>(rows), ri = static_cast<int>(r), k = static_cast<int>(rank);
  if (!whole.empty()) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, ri, ri, 1.0 / width, in, ri,
                whole.data(), ri, 0.0, out, ri);
    return;
  }
  // in C^T = (in right) left^T
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, ri, 1.0 / width, in, ri,
              right.data(), k, 0.0, scratch, k);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, ri, k, 1.0, scratch, k, left.data(), k,
              0.0, out, ri);
}

double CompressedM2L::mean_operator_rank() const {
  double sum = 0;
  for (std::size_t d = 0; d < placements_.size(); ++d) {
    if (placements_[d].canonical < 0) continue;
    const std::size_t canonical = static_cast<std::size_t>(placements_[d].canonical);
    sum += static_cast<double>(operators_.empty() ? canonical_operators_[canonical].rank
                                                  : operators_[d].rank);
  }
  return sum / 316;
}

// Procedure: symmetric_gram
std::vector<double> CompressedM2L::symmetric_gram(
    const std::function<std::vector<double>(std::size_t)>& canonical_factor) const {
  // sum_d F_d F_d^T over the 316 offsets, with F_d = P F_c P^T for the canonical c of d: each
  // canonical product F_c F_c^T is formed once and added with its nodes permuted.
  const std::size_t n = nodes_;
  std::vector<std::vector<std::vector<std::size_t>>> permutations(16);
  for (const auto& [dx, dy, dz] : far_offsets()) {
    Symmetry s = symmetry(dx, dy, dz);
    permutations[static_cast<std::size_t>(s.canonical)].push_back(std::move(s.permutation));
  }
  std::vector<double> sum(n * n, 0.0), product(n * n);
  for (std::size_t c = 0; c < permutations.size(); ++c) {
    const std::vector<double> factor = canonical_factor(c);
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                1.0, factor.data(), static_cast<int>(n), 0.0, product.data(), static_cast<int>(n));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j) product[j * n + i] = product[i * n + j];
    for (const std::vector<std::size_t>& permutation : permutations[c])
      for (std::size_t i = 0; i < n; ++i) {
        const double* from = &product[permutation[i] * n];
        double* to = &sum[i * n];
        for (std::size_t j = 0; j < n; ++j) to[j] += from[permutation[j]];
      }
  }
  return sum;
}

// Procedure: invariant_subspace
std::vector<double> CompressedM2L::invariant_subspace(const std::vector<double>& basis,
                                                      std::size_t columns) const {
  // The projector onto span(basis), averaged over the 48 symmetries of the cube, commutes with
  // each of them; its eigenvectors of eigenvalue near 1 span an invariant subspace close to
  // span(basis), to working precision since the eigenvalues cluster at 0 and 1.
  const std::size_t n = nodes_;
  std::vector<double> projector(n * n), average(n * n, 0.0);
  cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, static_cast<int>(n),
              static_cast<int>(columns), 1.0, basis.data(), static_cast<int>(columns), 0.0,
              projector.data(), static_cast<int>(n));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) projector[j * n + i] = projector[i * n + j];
  const std::vector<std::vector<std::size_t>> symmetries = cube_symmetries();
  for (const std::vector<std::size_t>& permutation : symmetries)
    for (std::size_t i = 0; i < n; ++i) {
      const double* from = &projector[permutation[i] * n];
      double* to = &average[i * n];
      for (std::size_t j = 0; j < n; ++j) to[j] += from[permutation[j]];
    }
  for (double& x : average) x /= static_cast<double>(symmetries.size());
  std::vector<double> eigenvalues = eigen_descending(average, n);
  std::size_t rank = 0;
  while (rank < n && eigenvalues[rank] > 0.5) ++rank;
  std::vector<double> invariant(n * rank);
  for (std::size_t m = 0; m < n; ++m)
    std::copy(&average[m * n], &average[m * n] + rank, &invariant[m * rank]);
  return invariant;
}

// Procedure: compute_basis
std::vector<double> CompressedM2L::compute_basis(double threshold) {
  const std::size_t n = nodes_;
  const std::vector<std::array<int, 3>> canonical = canonical_offsets();
  const auto weighted = [&](std::size_t c) {
    return weighted_operator(canonical[c][0], canonical[c][1], canonical[c][2]);
  };
  // Stage 1: the eigenvectors of G = sum_d (W K_d W)(W K_d W)^T. Squared, the singular values
  // below ~1e-8 of the largest drown in the rounding of G.
  std::vector<double> gram = symmetric_gram(weighted);
  std::vector<double> eigenvalues = eigen_descending(gram, n);
  singular_values_.resize(n);
  for (std::size_t k = 0; k < n; ++k)
    singular_values_[k] = std::sqrt(std::max(eigenvalues[k], 0.0));
  const double largest = singular_values_[0];
  const auto cut = [&](const std::vector<double>& values, std::size_t from, double relative) {
    std::size_t rank = from;
    while (rank < n && values[rank] > relative * largest) ++rank;
    return rank;
  };
  if (threshold >= deflation_threshold) {
    rank_ = std::max<std::size_t>(cut(singular_values_, 0, threshold), 1);
    std::vector<double> basis(n * rank_);
    for (std::size_t m = 0; m < n; ++m)
      std::copy(&gram[m * n], &gram[m * n] + rank_, &basis[m * rank_]);
    return basis;
  }
  // Stage 2 (deflation): U1 = the stage-1 directions above deflation_threshold, made exactly
  // invariant under the cube's symmetries so that the residuals B_d = (I - U1 U1^T) W K_d W are
  // again P B_c P^T. Formed explicitly, their small entries are accurate, and the eigenvectors
  // of sum_d B_d B_d^T resolve the singular values down to ~1e-8 of deflation_threshold.
  const std::size_t first = cut(singular_values_, 0, deflation_threshold);
  std::vector<double> leading(n * first);
  for (std::size_t m = 0; m < n; ++m)
    std::copy(&gram[m * n], &gram[m * n] + first, &leading[m * first]);
  const std::vector<double> u1 = invariant_subspace(leading, first);
  const std::size_t r1 = u1.size() / n;
  std::vector<double> projection(r1 * n);
  const auto residual = [&](std::size_t c) {
    std::vector<double> b = weighted(c);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(r1), static_cast<int>(n),
                static_cast<int>(n), 1.0, u1.data(), static_cast<int>(r1), b.data(),
                static_cast<int>(n), 0.0, projection.data(), static_cast<int>(n));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                static_cast<int>(r1), -1.0, u1.data(), static_cast<int>(r1), projection.data(),
                static_cast<int>(n), 1.0, b.data(), static_cast<int>(n));
    return b;
  };
  std::vector<double> residual_gram = symmetric_gram(residual);
  const std::vector<double> residual_values = eigen_descending(residual_gram, n);
  for (std::size_t k = r1; k < n; ++k)
    singular_values_[k] = std::sqrt(std::max(residual_values[k - r1], 0.0));
  rank_ = std::max(cut(singular_values_, r1, threshold), r1);
  const std::size_t r2 = rank_ - r1;
  // U = [U1 U2], U2 orthogonalised against U1 (twice, as the residual Gram's eigenvectors are
  // orthogonal to U1 only to ~1e-8) and orthonormalised by QR.
  std::vector<double> u2(n * r2), overlap(r1 * r2);
  for (std::size_t m = 0; m < n; ++m)
    std::copy(&residual_gram[m * n], &residual_gram[m * n] + r2, &u2[m * r2]);
  for (int pass = 0; pass < 2 && r2 > 0; ++pass) {
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(r1), static_cast<int>(r2),
                static_cast<int>(n), 1.0, u1.data(), static_cast<int>(r1), u2.data(),
                static_cast<int>(r2), 0.0, overlap.data(), static_cast<int>(r2));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n),
                static_cast<int>(r2), static_cast<int>(r1), -1.0, u1.data(), static_cast<int>(r1),
                overlap.data(), static_cast<int>(r2), 1.0, u2.data(), static_cast<int>(r2));
  }
  if (r2 > 0) orthonormalise(u2, n, r2);
  std::vector<double> basis(n * rank_);
  for (std::size_t m = 0; m < n; ++m) {
    std::copy(&u1[m * r1], &u1[m * r1] + r1, &basis[m * rank_]);
    std::copy(&u2[m * r2], &u2[m * r2] + r2, &basis[m * rank_ + r1]);
  }
  return basis;
}

// Procedure: cube_symmetries
std::vector<std::vector<std::size_t>> CompressedM2L::cube_symmetries() const {
  // The node permutations of the 48 symmetries of the cube: the axes permuted, then each
  // reflected or not.
  std::vector<std::vector<std::size_t>> symmetries;
  int axes[3] = {0, 1, 2};
  do {
    for (int reflections = 0; reflections < 8; ++reflections) {
      std::vector<std::size_t> permutation(nodes_);
      for (std::size_t i = 0; i < p_; ++i)
        for (std::size_t j = 0; j < p_; ++j)
          for (std::size_t k = 0; k < p_; ++k) {
            std::size_t node[3] = {i, j, k};
            for (int d = 0; d < 3; ++d)
              if (reflections >> d & 1) node[d] = p_ - 1 - node[d];
            permutation[(i * p_ + j) * p_ + k] =
                (node[axes[0]] * p_ + node[axes[1]]) * p_ + node[axes[2]];
          }
      symmetries.push_back(std::move(permutation));
    }
  } while (std::next_permutation(axes, axes + 3));
  return symmetries;
}

// Procedure: weighted_operator
std::vector<double> CompressedM2L::weighted_operator(int a, int b, int c) const {
  // Unit cells: the target centered at the origin, the source at (a, b, c).
  std::vector<double> x(nodes_), y(nodes_), z(nodes_);
  for (std::size_t i = 0; i < p_; ++i)
    for (std::size_t j = 0; j < p_; ++j)
      for (std::size_t k = 0; k < p_; ++k) {
        const std::size_t m = (i * p_ + j) * p_ + k;
        x[m] = nodes_1d_[i] / 2;
        y[m] = nodes_1d_[j] / 2;
        z[m] = nodes_1d_[k] / 2;
      }
  std::vector<double> matrix(nodes_ * nodes_);
  for (std::size_t m = 0; m < nodes_; ++m)
    for (std::size_t n = 0; n < nodes_; ++n) {
      const double dx = x[m] - (x[n] + a), dy = y[m] - (y[n] + b), dz = z[m] - (z[n] + c);
      matrix[m * nodes_ + n] = weights_[m] * weights_[n] / std::sqrt(dx * dx + dy * dy + dz * dz);
    }
  return matrix;
}

// Procedure: symmetry
CompressedM2L::Symmetry CompressedM2L::symmetry(int dx, int dy, int dz) const {
  // Reflect each axis with a negative offset (node m -> p - 1 - m, as the nodes are symmetric),
  // then sort the axes by offset. It maps the target cell onto itself, so the matrix is the
  // canonical one with node indices mapped the same way on both sides.
  const int offset[3] = {dx, dy, dz};
  int axes[3] = {0, 1, 2};
  std::sort(axes, axes + 3,
            [&](int i, int j) { return std::abs(offset[i]) < std::abs(offset[j]); });
  const int a = std::abs(offset[axes[0]]), b = std::abs(offset[axes[1]]),
            c = std::abs(offset[axes[2]]);
  const std::vector<std::array<int, 3>> canonical = canonical_offsets();
  const int index =
      static_cast<int>(std::find(canonical.begin(), canonical.end(), std::array<int, 3>{a, b, c}) -
                       canonical.begin());
  std::vector<std::size_t> permutation(nodes_);
  for (std::size_t i = 0; i < p_; ++i)
    for (std::size_t j = 0; j < p_; ++j)
      for (std::size_t k = 0; k < p_; ++k) {
        std::size_t node[3] = {i, j, k};
        for (int d = 0; d < 3; ++d)
          if (offset[d] < 0) node[d] = p_ - 1 - node[d];
        permutation[(i * p_ + j) * p_ + k] =
            (node[axes[0]] * p_ + node[axes[1]]) * p_ + node[axes[2]];
      }
  return {index, std::move(permutation)};
}

void CompressedM2L::compress(const double* multipoles, double* compressed,
                             std::size_t count) const {
  if (!canonical_.empty()) {
    std::copy(multipoles, multipoles + count * nodes_, compressed);
    return;
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(count),
              static_cast<int>(rank_), static_cast<int>(nodes_), 1.0, multipoles,
              static_cast<int>(nodes_), expansion_.data(), static_cast<int>(rank_), 0.0, compressed,
              static_cast<int>(rank_));
}

void CompressedM2L::expand(const double* compressed, double* locals, std::size_t count) const {
  if (!canonical_.empty()) {
    for (std::size_t k = 0; k < count * nodes_; ++k) locals[k] += compressed[k];
    return;
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(count),
              static_cast<int>(nodes_), static_cast<int>(rank_), 1.0, compressed,
              static_cast<int>(rank_), expansion_.data(), static_cast<int>(rank_), 1.0, locals,
              static_cast<int>(nodes_));
}

// Procedure: uncompressed_m2l
void CompressedM2L::uncompressed_m2l(int dx, int dy, int dz, double width,
                                     const double* const* sources, double* const* targets,
                                     std::size_t count) const {
  const Symmetry s = symmetry(dx, dy, dz);
  const double* matrix = canonical_[static_cast<std::size_t>(s.canonical)].data();
  const std::size_t n = nodes_;
  const std::size_t block = 64;  // columns: the block and its product stay in cache
  std::vector<double> in(n * std::min(block, count)), out(in.size());
  for (std::size_t first = 0; first < count; first += block) {
    const std::size_t columns = std::min(block, count - first);
    for (std::size_t j = 0; j < columns; ++j) {
      const double* m = sources[first + j];
      for (std::size_t k = 0; k < n; ++k) in[s.permutation[k] * columns + j] = m[k];
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n),
                static_cast<int>(columns), static_cast<int>(n), 1.0 / width, matrix,
                static_cast<int>(n), in.data(), static_cast<int>(columns), 0.0, out.data(),
                static_cast<int>(columns));
    for (std::size_t j = 0; j < columns; ++j) {
      double* l = targets[first + j];
      for (std::size_t k = 0; k < n; ++k) l[k] += out[s.permutation[k] * columns + j];
    }
  }
}

void CompressedM2L::m2l(int dx, int dy, int dz, double width, const double* const* sources,
                        double* const* targets, std::size_t count) const {
  if (std::max({std::abs(dx), std::abs(dy), std::abs(dz)}) < 2 ||
      std::max({std::abs(dx), std::abs(dy), std::abs(dz)}) > 3)
    throw std::invalid_argument("CompressedM2L: offset (" + std::to_string(dx) + ", " +
                                std::to_string(dy) + ", " + std::to_string(dz) +
                                ") is not in the V list");
  if (!canonical_.empty()) return uncompressed_m2l(dx, dy, dz, width, sources, targets, count);
  const std::size_t r = rank_, index = static_cast<std::size_t>(offset_index(dx, dy, dz));
  const Placement& placement = placements_[index];
  const bool stored = !operators_.empty();
  const Operator& op = stored ? operators_[index]
                              : canonical_operators_[static_cast<std::size_t>(placement.canonical)];
  const double* q = !stored && placement.rotation >= 0
                        ? rotations_[static_cast<std::size_t>(placement.rotation)].data()
                        : nullptr;
  // The pairs go through C_d in blocks of rows, (block x r) C_d^T: the block and its product
  // stay in cache and C_d is read once per block. Without the stored C_d, a row s^T goes
  // through s^T Q^T C^T Q = (Q^T C Q s)^T: C between two rotations.
  const std::size_t block = 256;
  std::vector<double> in(r * std::min(block, count)), out(in.size()), scratch(in.size());
  const auto rotation = [&](std::size_t rows, CBLAS_TRANSPOSE transpose, const double* from,
                            double* to) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, transpose, static_cast<int>(rows), static_cast<int>(r),
                static_cast<int>(r), 1.0, from, static_cast<int>(r), q, static_cast<int>(r), 0.0,
                to, static_cast<int>(r));
  };
  for (std::size_t first = 0; first < count; first += block) {
    const std::size_t rows = std::min(block, count - first);
    for (std::size_t j = 0; j < rows; ++j)
      std::copy(sources[first + j], sources[first + j] + r, &in[j * r]);
    if (q == nullptr) {
      op.apply(rows, r, width, in.data(), out.data(), scratch.data());
    } else {
      rotation(rows, CblasTrans, in.data(), out.data());
      op.apply(rows, r, width, out.data(), in.data(), scratch.data());
      rotation(rows, CblasNoTrans, in.data(), out.data());
    }
    for (std::size_t j = 0; j < rows; ++j) {
      double* target = targets[first + j];
      const double* result = &out[j * r];
      for (std::size_t k = 0; k < r; ++k) target[k] += result[k];
    }
  }
}

std::vector<double> CompressedM2L::device_operators() const {
  if (operators_.empty()) return {};
  const std::size_t r = rank_, slots = 343;
  std::vector<double> values(2 * slots, 0.0);
  for (std::size_t d = 0; d < operators_.size(); ++d) {
    const Operator& op = operators_[d];
    if (op.rank == 0) continue;
    const std::size_t k = op.rank;
    values[2 * d] = static_cast<double>(k);
    values[2 * d + 1] = static_cast<double>(values.size());
    if (!op.whole.empty()) {
      for (std::size_t m = 0; m < r; ++m)
        for (std::size_t i = 0; i < r; ++i) values.push_back(op.whole[i * r + m]);
      continue;
    }
    values.insert(values.end(), op.right.begin(), op.right.end());  // row-major r x k
    for (std::size_t q = 0; q < k; ++q)
      for (std::size_t i = 0; i < r; ++i) values.push_back(op.left[i * k + q]);
  }
  return values;
}

}  // namespace fmm
