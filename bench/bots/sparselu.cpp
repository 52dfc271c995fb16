#include "sparselu.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace bots {
namespace sparselu {

// The kernels keep BOTS's arithmetic: every element receives the same updates in the same order.
// fwd and bmod run their loops in another order than BOTS's (the element index innermost, so that
// the inner loop streams along rows), which changes neither.

void lu0(double* diag, int n) {
  for (int k = 0; k < n; ++k) {
    const double* pivot_row = diag + k * n;
    for (int i = k + 1; i < n; ++i) {
      double* row = diag + i * n;
      const double multiplier = row[k] /= pivot_row[k];
      for (int j = k + 1; j < n; ++j) row[j] -= multiplier * pivot_row[j];
    }
  }
}

void fwd(const double* diag, double* row_block, int n) {
  for (int k = 0; k < n; ++k) {
    const double* solved_row = row_block + k * n;
    for (int i = k + 1; i < n; ++i) {
      const double l = diag[i * n + k];
      double* row = row_block + i * n;
      for (int j = 0; j < n; ++j) row[j] -= l * solved_row[j];
    }
  }
}

void bdiv(const double* diag, double* col_block, int n) {
  for (int i = 0; i < n; ++i) {
    double* row = col_block + i * n;
    for (int k = 0; k < n; ++k) {
      const double* u_row = diag + k * n;
      const double x = row[k] /= u_row[k];
      for (int j = k + 1; j < n; ++j) row[j] -= x * u_row[j];
    }
  }
}

void bmod(const double* col_block, const double* row_block, double* inner, int n) {
  for (int i = 0; i < n; ++i) {
    const double* a = col_block + i * n;
    double* row = inner + i * n;
    for (int k = 0; k < n; ++k) {
      const double x = a[k];
      const double* b = row_block + k * n;
      for (int j = 0; j < n; ++j) row[j] -= x * b[j];
    }
  }
}

}  // namespace sparselu

namespace {

// genmat's pattern: the tridiagonal band of blocks, plus the even blocks of every sixth block row
// (right of the diagonal) and block column (below it).
bool nonzero_in_input(int ii, int jj) {
  if (ii == jj || ii == jj - 1 || ii == jj + 1) return true;
  if (ii % 2 == 1 || jj % 2 == 1) return false;
  if (ii < jj) return ii % 3 == 0;
  return jj % 3 == 0;
}

// genmat's values: one linear congruential sequence (x := 3125 x mod 2^16, from 1325) over the
// input's blocks in row-major block order, each value mapped to [-2, 2).
class GenmatValues {
 public:
  double next() {
    state_ = (3125 * state_) % 65536;
    return (state_ - 32768.0) / 16384.0;
  }

 private:
  std::int32_t state_ = 1325;
};

}  // namespace

SparseLu::SparseLu(int blocks, int block_size) : blocks_(blocks), block_size_(block_size) {
  if (blocks < 1 || block_size < 1)
    throw std::invalid_argument("sparselu: blocks and block size must be at least 1, not " +
                                std::to_string(blocks) + " and " + std::to_string(block_size));
  const std::size_t count = block_count();
  in_input_.resize(count);
  std::vector<char> in_factors(count);
  for (int ii = 0; ii < blocks_; ++ii)
    for (int jj = 0; jj < blocks_; ++jj)
      in_input_[index(ii, jj)] = in_factors[index(ii, jj)] = nonzero_in_input(ii, jj);
  // The symbolic factorisation: the bmod of step k fills (i, j) when (i, k) and (k, j) are
  // non-zero, exactly as the numeric loops test them.
  for (int k = 0; k < blocks_; ++k)
    for (int i = k + 1; i < blocks_; ++i)
      if (in_factors[index(i, k)])
        for (int j = k + 1; j < blocks_; ++j)
          if (in_factors[index(k, j)]) in_factors[index(i, j)] = 1;
  offset_.assign(count, -1);
  const std::size_t elements = static_cast<std::size_t>(block_size_) * block_size_;
  std::size_t next = 0;
  for (std::size_t b = 0; b < count; ++b)
    if (in_factors[b]) {
      offset_[b] = static_cast<std::ptrdiff_t>(next);
      next += elements;
    }
  values_.resize(next);

  reset();
  run_sequential();
  for (double value : values_)
    if (!std::isfinite(value))
      throw std::runtime_error("sparselu: the sequential factorisation of " + input() +
                               " is not finite (the matrix needs pivoting)");
  reference_ = values_;
  reset();
}

std::string SparseLu::input() const {
  return std::to_string(blocks_) + "x" + std::to_string(blocks_) +
         " blocks, bs=" + std::to_string(block_size_);
}

void SparseLu::reset() {
  GenmatValues generator;
  const std::size_t elements = static_cast<std::size_t>(block_size_) * block_size_;
  for (int ii = 0; ii < blocks_; ++ii)
    for (int jj = 0; jj < blocks_; ++jj) {
      double* data = block_data(ii, jj);
      if (data == nullptr) continue;
      const bool given = in_input_[index(ii, jj)] != 0;
      for (std::size_t e = 0; e < elements; ++e) data[e] = given ? generator.next() : 0.0;
    }
}

void SparseLu::run_sequential() {
  const int n = block_size_;
  for (int k = 0; k < blocks_; ++k) {
    sparselu::lu0(block_data(k, k), n);
    for (int j = k + 1; j < blocks_; ++j)
      if (nonzero(k, j)) sparselu::fwd(block_data(k, k), block_data(k, j), n);
    for (int i = k + 1; i < blocks_; ++i)
      if (nonzero(i, k)) sparselu::bdiv(block_data(k, k), block_data(i, k), n);
    for (int i = k + 1; i < blocks_; ++i)
      if (nonzero(i, k))
        for (int j = k + 1; j < blocks_; ++j)
          if (nonzero(k, j))
            sparselu::bmod(block_data(i, k), block_data(k, j), block_data(i, j), n);
  }
}

void SparseLu::run_versa(versa::Runtime& rt) {
  using versa::read;
  using versa::Span;
  using versa::write;
  const int n = block_size_;
  const std::size_t elements = static_cast<std::size_t>(n) * n;
  std::vector<versa::Handle<double>> handles(block_count());
  for (int ii = 0; ii < blocks_; ++ii)
    for (int jj = 0; jj < blocks_; ++jj)
      if (double* data = block_data(ii, jj)) handles[index(ii, jj)] = rt.data(data, elements);
  auto handle = [&](int ii, int jj) -> const versa::Handle<double>& {
    return handles[index(ii, jj)];
  };
  for (int k = 0; k < blocks_; ++k) {
    rt.submit(
        "lu0", [n](Span<double> diag) { sparselu::lu0(diag.data(), n); }, write(handle(k, k)));
    for (int j = k + 1; j < blocks_; ++j)
      if (nonzero(k, j))
        rt.submit(
            "fwd",
            [n](Span<const double> diag, Span<double> row_block) {
              sparselu::fwd(diag.data(), row_block.data(), n);
            },
            read(handle(k, k)), write(handle(k, j)));
    for (int i = k + 1; i < blocks_; ++i)
      if (nonzero(i, k))
        rt.submit(
            "bdiv",
            [n](Span<const double> diag, Span<double> col_block) {
              sparselu::bdiv(diag.data(), col_block.data(), n);
            },
            read(handle(k, k)), write(handle(i, k)));
    for (int i = k + 1; i < blocks_; ++i)
      if (nonzero(i, k))
        for (int j = k + 1; j < blocks_; ++j)
          if (nonzero(k, j))
            rt.submit(
                "bmod",
                [n](Span<const double> col_block, Span<const double> row_block,
                    Span<double> inner) {
                  sparselu::bmod(col_block.data(), row_block.data(), inner.data(), n);
                },
                read(handle(i, k)), read(handle(k, j)), write(handle(i, j)));
  }
  rt.wait_all();
}

std::span<double> SparseLu::block(int ii, int jj) {
  if (ii < 0 || jj < 0 || ii >= blocks_ || jj >= blocks_)
    throw std::out_of_range("sparselu: no block (" + std::to_string(ii) + ", " +
                            std::to_string(jj) + ")");
  double* data = block_data(ii, jj);
  if (data == nullptr) return {};
  return {data, static_cast<std::size_t>(block_size_) * block_size_};
}

int SparseLu::input_blocks() const {
  int count = 0;
  for (char given : in_input_) count += given != 0;
  return count;
}

int SparseLu::factor_blocks() const {
  int count = 0;
  for (std::ptrdiff_t offset : offset_) count += offset >= 0;
  return count;
}

std::uint64_t SparseLu::block_operations() const {
  std::uint64_t count = 0;
  for (int k = 0; k < blocks_; ++k) {
    std::uint64_t in_row = 0;
    std::uint64_t in_column = 0;
    for (int m = k + 1; m < blocks_; ++m) {
      in_row += nonzero(k, m);
      in_column += nonzero(m, k);
    }
    count += 1 + in_row + in_column + in_row * in_column;
  }
  return count;
}

std::string SparseLu::verify() const {
  // BOTS's checkmat: a relative error of at most 1e-6 per element (BOTS divides by the signed
  // reference value, which lets any error through where it is negative; this takes its size).
  constexpr double tolerance = 1e-6;
  const std::size_t elements = static_cast<std::size_t>(block_size_) * block_size_;
  for (int ii = 0; ii < blocks_; ++ii)
    for (int jj = 0; jj < blocks_; ++jj) {
      const std::ptrdiff_t offset = offset_[index(ii, jj)];
      if (offset < 0) continue;
      for (std::size_t e = 0; e < elements; ++e) {
        const double expected = reference_[static_cast<std::size_t>(offset) + e];
        const double actual = values_[static_cast<std::size_t>(offset) + e];
        // Written so that a NaN fails.
        if (std::abs(actual - expected) <= tolerance * std::abs(expected)) continue;
        char message[256];
        std::snprintf(message, sizeof message,
                      "block (%d, %d) element (%zu, %zu) = %.17g, the sequential factors have "
                      "%.17g",
                      ii, jj, e / static_cast<std::size_t>(block_size_),
                      e % static_cast<std::size_t>(block_size_), actual, expected);
        return message;
      }
    }
  return {};
}

}  // namespace bots
