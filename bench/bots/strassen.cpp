#include "strassen.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

namespace bots {
namespace cilkstrassen {
namespace {

// Eight columns of a row of C at a time, summed in registers over the whole row of A: the shape
// of the suite's plain block multiply. size is a multiple of 8.
void multiply_plainly(const Product& p, bool accumulate) {
  for (std::size_t i = 0; i < p.size; ++i) {
    double* c_row = p.c + i * p.ldc;
    const double* a_row = p.a + i * p.lda;
    for (std::size_t j = 0; j < p.size; j += 8) {
      std::array<double, 8> sums{};
      if (accumulate) std::copy_n(c_row + j, 8, sums.begin());
      for (std::size_t k = 0; k < p.size; ++k) {
        const double a = a_row[k];
        const double* b = p.b + k * p.ldb + j;
        for (int t = 0; t < 8; ++t) sums[t] += a * b[t];
      }
      std::copy(sums.begin(), sums.end(), c_row + j);
    }
  }
}

// The quadrant product C_ij (+)= A_ik B_kj of p.
Product quadrant(const Product& p, std::size_t i, std::size_t k, std::size_t j) {
  const std::size_t h = p.size / 2;
  return {p.c + i * h * p.ldc + j * h,
          p.a + i * h * p.lda + k * h,
          p.b + k * h * p.ldb + j * h,
          h,
          p.ldc,
          p.lda,
          p.ldb};
}

}  // namespace

// The first product into each quadrant of C sets or accumulates as asked; the second adds.
void multiply_by_quadrants(const Product& product, bool accumulate) {
  const auto multiply =
      product.size / 2 > plain_block_up_to ? multiply_by_quadrants : multiply_plainly;
  static constexpr std::size_t order[4][2] = {{0, 0}, {0, 1}, {1, 1}, {1, 0}};
  for (const auto& [i, j] : order) multiply(quadrant(product, i, 0, j), accumulate);
  for (const auto& [i, j] : order) multiply(quadrant(product, i, 1, j), true);
}

// Winograd's form: S1 = A21 + A22, S2 = S1 - A11, S3 = A11 - A21, S4 = A12 - S2,
// S5 = B12 - B11, S6 = B22 - S5, S7 = B22 - B12, S8 = S6 - B21; the products are M2 = A11 B11,
// M5 = S1 S5, T1 = S2 S6, C22 = S3 S7, C11 = A12 B21, C12 = S4 B22 and C21 = A22 S8.
Step::Step(const Product& product)
    : whole_(product),
      half_(product.size / 2),
      temporaries_(std::make_unique_for_overwrite<double[]>(11 * half_ * half_)) {
  const std::size_t h = half_;
  const std::size_t lda = product.lda;
  const std::size_t ldb = product.ldb;
  const std::size_t ldc = product.ldc;
  double* s[8];
  for (std::size_t t = 0; t < 8; ++t) s[t] = temporaries_.get() + t * h * h;
  double* m2 = temporaries_.get() + 8 * h * h;
  double* m5 = temporaries_.get() + 9 * h * h;
  double* t1 = temporaries_.get() + 10 * h * h;
  const double* a11 = product.a;
  const double* a12 = a11 + h;
  const double* a21 = a11 + h * lda;
  const double* a22 = a21 + h;
  const double* b11 = product.b;
  const double* b12 = b11 + h;
  const double* b21 = b11 + h * ldb;
  const double* b22 = b21 + h;
  double* c11 = product.c;
  double* c12 = c11 + h;
  double* c21 = c11 + h * ldc;
  double* c22 = c21 + h;

  for (std::size_t row = 0; row < h; ++row)
    for (std::size_t col = 0; col < h; ++col) {
      const std::size_t ia = row * lda + col;
      const std::size_t ib = row * ldb + col;
      const std::size_t it = row * h + col;
      s[0][it] = a21[ia] + a22[ia];
      s[1][it] = s[0][it] - a11[ia];
      s[2][it] = a11[ia] - a21[ia];
      s[3][it] = a12[ia] - s[1][it];
      s[4][it] = b12[ib] - b11[ib];
      s[5][it] = b22[ib] - s[4][it];
      s[6][it] = b22[ib] - b12[ib];
      s[7][it] = s[5][it] - b21[ib];
    }

  products_ = {Product{m2, a11, b11, h, h, lda, ldb},    Product{m5, s[0], s[4], h, h, h, h},
               Product{t1, s[1], s[5], h, h, h, h},      Product{c22, s[2], s[6], h, ldc, h, h},
               Product{c11, a12, b21, h, ldc, lda, ldb}, Product{c12, s[3], b22, h, ldc, h, ldb},
               Product{c21, a22, s[7], h, ldc, lda, h}};
}

// With U2 = M2 + T1 and U3 = U2 + C22: C11 += M2, C12 += M5 + U2, C22 = M5 + U3, C21 = U3 - C21.
void Step::combine() const {
  const std::size_t h = half_;
  const std::size_t ldc = whole_.ldc;
  const double* m2 = temporaries_.get() + 8 * h * h;
  const double* m5 = temporaries_.get() + 9 * h * h;
  const double* t1 = temporaries_.get() + 10 * h * h;
  double* c11 = whole_.c;
  double* c12 = c11 + h;
  double* c21 = c11 + h * ldc;
  double* c22 = c21 + h;
  for (std::size_t row = 0; row < h; ++row)
    for (std::size_t col = 0; col < h; ++col) {
      const std::size_t ic = row * ldc + col;
      const std::size_t it = row * h + col;
      const double u2 = m2[it] + t1[it];
      const double u3 = u2 + c22[ic];
      c11[ic] += m2[it];
      c12[ic] += m5[it] + u2;
      c22[ic] = m5[it] + u3;
      c21[ic] = u3 - c21[ic];
    }
}

}  // namespace cilkstrassen

namespace {

using cilkstrassen::Product;

void strassen_sequential(const Product& product, std::size_t cutoff) {
  if (product.size <= cutoff) {
    cilkstrassen::multiply_by_quadrants(product, false);
    return;
  }
  const cilkstrassen::Step step(product);
  for (const Product& part : step.products()) strassen_sequential(part, cutoff);
  step.combine();
}

// The step (with its products) lives on the spawning task's stack until its sync, so that each
// closure holds a reference and the cut-off.
void strassen_versa(versa::Runtime& rt, const Product& product, std::size_t cutoff) {
  if (product.size <= cutoff) {
    cilkstrassen::multiply_by_quadrants(product, false);
    return;
  }
  const cilkstrassen::Step step(product);
  for (const Product& part : step.products())
    rt.spawn("strassen", [&rt, &part, cutoff] { strassen_versa(rt, part, cutoff); });
  rt.sync();
  step.combine();
}

// C = A B by the textbook loops (i, k, j), in blocks of k and j that stay in cache: independent
// of the kernel's code, it is the verification's reference.
std::vector<double> plain_product(const std::vector<double>& a, const std::vector<double>& b,
                                  std::size_t n) {
  constexpr std::size_t k_block = 128;
  constexpr std::size_t j_block = 512;
  std::vector<double> c(n * n, 0.0);
  for (std::size_t k0 = 0; k0 < n; k0 += k_block)
    for (std::size_t j0 = 0; j0 < n; j0 += j_block) {
      const std::size_t k1 = std::min(n, k0 + k_block);
      const std::size_t j1 = std::min(n, j0 + j_block);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = k0; k < k1; ++k) {
          const double aik = a[i * n + k];
          for (std::size_t j = j0; j < j1; ++j) c[i * n + j] += aik * b[k * n + j];
        }
    }
  return c;
}

std::vector<double> random_matrix(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<double> m(n * n);
  for (double& x : m) x = static_cast<double>(generator() >> 11) * 0x1.0p-53;
  return m;
}

bool is_power_of_two(std::size_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

Strassen::Strassen(std::size_t n, std::size_t cutoff) : n_(n), cutoff_(cutoff) {
  if (n < 16 || !is_power_of_two(n))
    throw std::invalid_argument("strassen: n must be a power of two >= 16, not " +
                                std::to_string(n));
  if (cutoff < 16)
    throw std::invalid_argument("strassen: the cut-off must be at least 16, not " +
                                std::to_string(cutoff));
  a_ = random_matrix(n, 1);
  b_ = random_matrix(n, 2);
  c_.resize(n * n);
  reference_ = plain_product(a_, b_, n);
}

void Strassen::reset() { std::fill(c_.begin(), c_.end(), 0.0); }

void Strassen::run_sequential() { strassen_sequential(whole(), cutoff_); }

void Strassen::run_versa(versa::Runtime& rt) {
  rt.spawn("strassen", [this, &rt] { strassen_versa(rt, whole(), cutoff_); });
  rt.sync();
}

std::string Strassen::verify() const {
  for (std::size_t i = 0; i < n_ * n_; ++i) {
    const double error = std::abs(c_[i] - reference_[i]);
    if (!(error <= 1e-6 * std::abs(reference_[i]))) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "strassen: C(%zu, %zu) = %.17g, the plain product gives %.17g (relative "
                    "error above 1e-6)",
                    i / n_, i % n_, c_[i], reference_[i]);
      return text;
    }
  }
  return {};
}

}  // namespace bots
