// BOTS strassen: the Cilk benchmark's Strassen-Winograd product of row-major matrices (seven
// half-size products and fifteen additions per step). Above the cut-off size a step computes
// its eight sums, runs the seven products as tasks, awaits them and combines; at or below it the
// product is done by quadrants down to 16 x 16 blocks, each by plain loops. The suite creates a
// task for every product at every level above the cut-off (its default version; its variants
// with a depth cut-off stop after two levels).
//
// Input: two n x n matrices of pseudo-random values in [0, 1) (a fixed-seed generator, as the
// suite's rand() / RAND_MAX). Cut-off: the suite's 64 at the bench scale; 16 at the small one, so
// that its 256 x 256 product still has four levels of tasks (2800 tasks). Verification: the
// suite's relative error (at most 1e-6 in every element) against a plain triple-loop product,
// made once in the constructor.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernel.hpp"
#include "versa/versa.hpp"

namespace bots {

// Strassen's pieces, shared by the recursions of every system.
namespace cilkstrassen {

// C = A B for size x size row-major blocks: element (i, j) of A is a[i * lda + j].
struct Product {
  double* c;
  const double* a;
  const double* b;
  std::size_t size;
  std::size_t ldc;
  std::size_t lda;
  std::size_t ldb;
};

// Blocks of this size or less are multiplied by plain loops.
inline constexpr std::size_t plain_block_up_to = 16;

// C = A B, or C += A B when `accumulate`, by quadrants down to plain_block_up_to: the leaf below
// the Strassen cut-off. size is a power of two >= 16.
[[gnu::noinline, gnu::aligned(64)]] void multiply_by_quadrants(const Product& product,
                                                               bool accumulate);

// One Strassen-Winograd step of a product, size a power of two >= 32: the constructor computes
// the sums of quadrants the seven products need (into temporaries it owns); once every product of
// products() has run, combine() forms C from them.
class Step {
 public:
  explicit Step(const Product& product);

  const std::array<Product, 7>& products() const { return products_; }
  void combine() const;

 private:
  Product whole_;
  std::size_t half_;
  // S1..S8, then the products M2, M5 and T1 that are not computed in C's quadrants.
  std::unique_ptr<double[]> temporaries_;
  std::array<Product, 7> products_;
};

}  // namespace cilkstrassen

class Strassen {
 public:
  static constexpr const char* name = "strassen";

  explicit Strassen(Scale scale)
      : Strassen(scale == Scale::bench ? 2048 : 256, scale == Scale::bench ? 64 : 16) {}
  // n a power of two >= 16; products of size <= cutoff (>= 16) are done by quadrants.
  Strassen(std::size_t n, std::size_t cutoff);

  std::string input() const {
    return "n=" + std::to_string(n_) + ",cutoff=" + std::to_string(cutoff_);
  }
  void reset();
  void run_sequential();
  void run_versa(versa::Runtime& rt);
  void run_openmp(int threads);
  void run_tbb(int threads);
  std::string verify() const;
  std::uint64_t tasks() const { return 0; }

  // The product C (the tests corrupt it).
  std::span<double> product() { return c_; }

 private:
  cilkstrassen::Product whole() { return {c_.data(), a_.data(), b_.data(), n_, n_, n_, n_}; }

  std::size_t n_;
  std::size_t cutoff_;
  std::vector<double> a_;
  std::vector<double> b_;
  std::vector<double> c_;
  std::vector<double> reference_;  // A B by the plain triple loop
};

}  // namespace bots
