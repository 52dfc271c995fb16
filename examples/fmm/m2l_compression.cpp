#include "m2l_compression.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
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
  const std::vector<double> basis = basis_from_gram(threshold);
  const std::size_t n = nodes_, r = rank_;
  expansion_.resize(n * r);
  for (std::size_t m = 0; m < n; ++m)
    for (std::size_t k = 0; k < r; ++k) expansion_[m * r + k] = basis[m * r + k] / weights_[m];

  // C_canonical = U^T (W K W) U for the 16 canonical offsets.
  const std::vector<std::array<int, 3>> canonical = canonical_offsets();
  std::vector<std::vector<double>> canonical_operators;
  std::vector<double> product(n * r);
  for (const auto& [a, b, c] : canonical) {
    const std::vector<double> k = weighted_operator(a, b, c);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(r),
                static_cast<int>(n), 1.0, k.data(), static_cast<int>(n), basis.data(),
                static_cast<int>(r), 0.0, product.data(), static_cast<int>(r));
    std::vector<double> compressed(r * r);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(r), static_cast<int>(r),
                static_cast<int>(n), 1.0, basis.data(), static_cast<int>(r), product.data(),
                static_cast<int>(r), 0.0, compressed.data(), static_cast<int>(r));
    canonical_operators.push_back(std::move(compressed));
  }

  // C_d = Q^T C_canonical Q with Q = U^T P^T U, Q computed once per symmetry.
  std::map<std::vector<std::size_t>, std::vector<double>> rotations;
  std::vector<double> permuted(n * r), half(r * r);
  operators_.resize(343);
  for (const auto& [dx, dy, dz] : far_offsets()) {
    const Symmetry s = symmetry(dx, dy, dz);
    auto [it, inserted] = rotations.try_emplace(s.permutation);
    std::vector<double>& q = it->second;
    if (inserted) {
      // (P^T U)[permutation[m]] = U[m]
      for (std::size_t m = 0; m < n; ++m)
        std::copy(&basis[m * r], &basis[m * r] + r, &permuted[s.permutation[m] * r]);
      q.resize(r * r);
      cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(r), static_cast<int>(r),
                  static_cast<int>(n), 1.0, basis.data(), static_cast<int>(r), permuted.data(),
                  static_cast<int>(r), 0.0, q.data(), static_cast<int>(r));
    }
    const std::vector<double>& c = canonical_operators[static_cast<std::size_t>(s.canonical)];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(r), static_cast<int>(r),
                static_cast<int>(r), 1.0, c.data(), static_cast<int>(r), q.data(),
                static_cast<int>(r), 0.0, half.data(), static_cast<int>(r));
    std::vector<double>& op = operators_[static_cast<std::size_t>(offset_index(dx, dy, dz))];
    op.resize(r * r);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(r), static_cast<int>(r),
                static_cast<int>(r), 1.0, q.data(), static_cast<int>(r), half.data(),
                static_cast<int>(r), 0.0, op.data(), static_cast<int>(r));
  }
}

// Procedure: basis_from_gram
std::vector<double> CompressedM2L::basis_from_gram(double threshold) {
  const std::size_t n = nodes_;
  const std::vector<std::array<int, 3>> canonical = canonical_offsets();
  std::vector<std::vector<std::vector<std::size_t>>> permutations(canonical.size());
  for (const auto& [dx, dy, dz] : far_offsets()) {
    Symmetry s = symmetry(dx, dy, dz);
    permutations[static_cast<std::size_t>(s.canonical)].push_back(std::move(s.permutation));
  }
  // G = sum_d P (K K^T) P^T over the offsets d of each canonical K (all weighted).
  std::vector<double> gram(n * n, 0.0), canonical_gram(n * n);
  for (std::size_t c = 0; c < canonical.size(); ++c) {
    const auto [a, b, z] = canonical[c];
    const std::vector<double> k = weighted_operator(a, b, z);
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                1.0, k.data(), static_cast<int>(n), 0.0, canonical_gram.data(),
                static_cast<int>(n));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j) canonical_gram[j * n + i] = canonical_gram[i * n + j];
    for (const std::vector<std::size_t>& permutation : permutations[c])
      for (std::size_t i = 0; i < n; ++i) {
        const double* from = &canonical_gram[permutation[i] * n];
        double* to = &gram[i * n];
        for (std::size_t j = 0; j < n; ++j) to[j] += from[permutation[j]];
      }
  }
  // Eigenvalues in ascending order, the eigenvectors in the columns.
  std::vector<double> eigenvalues(n);
  const int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'L', static_cast<int>(n), gram.data(),
                                  static_cast<int>(n), eigenvalues.data());
  if (info != 0)
    throw std::runtime_error("CompressedM2L: LAPACKE_dsyevd failed (" + std::to_string(info) + ")");
  singular_values_.resize(n);
  for (std::size_t k = 0; k < n; ++k)
    singular_values_[k] = std::sqrt(std::max(eigenvalues[n - 1 - k], 0.0));
  rank_ = 1;
  while (rank_ < n && singular_values_[rank_] > threshold * singular_values_[0]) ++rank_;
  std::vector<double> basis(n * rank_);
  for (std::size_t m = 0; m < n; ++m)
    for (std::size_t k = 0; k < rank_; ++k) basis[m * rank_ + k] = gram[m * n + (n - 1 - k)];
  return basis;
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
  const std::vector<double>& op = operators_[static_cast<std::size_t>(offset_index(dx, dy, dz))];
  const std::size_t r = rank_;
  // The pairs go through C_d in blocks of rows, (block x r) (r x r)^T: the block and its
  // product stay in cache and C_d is read once per block.
  const std::size_t block = 256;
  std::vector<double> in(r * std::min(block, count)), out(in.size());
  for (std::size_t first = 0; first < count; first += block) {
    const std::size_t rows = std::min(block, count - first);
    for (std::size_t j = 0; j < rows; ++j)
      std::copy(sources[first + j], sources[first + j] + r, &in[j * r]);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows),
                static_cast<int>(r), static_cast<int>(r), 1.0 / width, in.data(),
                static_cast<int>(r), op.data(), static_cast<int>(r), 0.0, out.data(),
                static_cast<int>(r));
    for (std::size_t j = 0; j < rows; ++j) {
      double* target = targets[first + j];
      const double* product = &out[j * r];
      for (std::size_t k = 0; k < r; ++k) target[k] += product[k];
    }
  }
}

}  // namespace fmm
