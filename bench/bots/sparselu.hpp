// SparseLU (BOTS sparselu): the LU factorisation, without pivoting, of a matrix of nb x nb blocks
// of bs x bs doubles of which only some blocks are non-zero. Step k factors the diagonal block
// (lu0), solves the non-zero blocks of row k (fwd) and of column k (bdiv) against it, and updates
// every block (i, j), i, j > k, whose (i, k) and (k, j) are non-zero (bmod); an update onto a zero
// block makes it non-zero (fill-in).
//
// Input: BOTS's generator, genmat: its block pattern and its linear congruential sequence of
// values, in double where BOTS has float. Bench: 40 x 40 blocks of 100 x 100 (6,180 block
// operations); small: 30 x 30 blocks of 16 x 16 (2,735).
//
// Tasks: one per block operation (BOTS's OpenMP version runs lu0 in the thread that creates the
// tasks; the others make it a task too). The fill-in is worked out symbolically in the
// constructor and every block that is ever non-zero is allocated (zeroed) up front: BOTS allocates
// a fill-in block inside its bmod task, which a dependency-driven run cannot do, since the tasks
// that read the block are submitted before it exists. The systems differ in what orders the tasks:
// the OpenMP "single" version waits at two barriers per step, as BOTS writes it; Versa (read and
// write accesses on one handle per block) and OpenMP `depend` derive the order from the blocks
// each task touches, so that step k+1 starts while step k still runs.
//
// Verification (BOTS's): every block equals the sequential factorisation's, to a relative error of
// 1e-6 per element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernel.hpp"
#include "versa/versa.hpp"

namespace bots {

class SparseLu {
 public:
  static constexpr const char* name = "sparselu";

  explicit SparseLu(Scale scale)
      : SparseLu(scale == Scale::bench ? 40 : 30, scale == Scale::bench ? 100 : 16) {}
  // A matrix of `blocks` x `blocks` blocks of `block_size` x `block_size`; both at least 1.
  // Factors it once sequentially, for the verification.
  SparseLu(int blocks, int block_size);

  std::string input() const;
  // Regenerates the input (the fill-in blocks zero).
  void reset();
  void run_sequential();
  // Submits every task from the calling thread, then waits for them all.
  void run_versa(versa::Runtime& rt);
  // BOTS's version: tasks from one thread, a taskwait after the row and column solves and after
  // the updates of each step.
  void run_openmp(int threads);
  // The same tasks with `depend` clauses on their blocks instead of taskwaits.
  void run_openmp_depend(int threads);
  std::string verify() const;
  std::uint64_t tasks() const { return 0; }

  // The block (ii, jj) of the matrix, row-major: the input after reset(), the factors after a
  // run. Empty for a block that stays zero throughout.
  std::span<double> block(int ii, int jj);
  // Blocks non-zero in the input, and in the factors (the input's and the fill-in).
  int input_blocks() const;
  int factor_blocks() const;
  // Tasks of a parallel run: one per lu0, fwd, bdiv and bmod.
  std::uint64_t block_operations() const;

 private:
  // Null when the block stays zero throughout.
  double* block_data(int ii, int jj) {
    const std::ptrdiff_t offset = offset_[index(ii, jj)];
    return offset < 0 ? nullptr : values_.data() + offset;
  }
  // Whether the block is non-zero in the factors. Step k tests blocks of row and column k only,
  // whose fill-in all happens at steps before k: the final pattern is the one BOTS sees there.
  bool nonzero(int ii, int jj) const { return offset_[index(ii, jj)] >= 0; }
  std::size_t block_count() const { return index(blocks_, 0); }
  std::size_t index(int ii, int jj) const {
    return static_cast<std::size_t>(ii) * static_cast<std::size_t>(blocks_) +
           static_cast<std::size_t>(jj);
  }

  int blocks_;
  int block_size_;
  std::vector<char> in_input_;          // per block: non-zero in the input
  std::vector<std::ptrdiff_t> offset_;  // per block: where it starts in values_, or -1
  std::vector<double> values_;          // the non-zero blocks, one after the other
  std::vector<double> reference_;       // values_ after the sequential factorisation
};

// BOTS's block kernels, shared by every system: `n` x `n` row-major blocks. Never inlined, and
// each on a cache line of its own (kernel.hpp).
namespace sparselu {
// Factors `diag` in place into L (unit lower, below the diagonal) and U.
[[gnu::noinline, gnu::aligned(64)]] void lu0(double* diag, int n);
// row_block := L^-1 row_block, L the unit lower factor in `diag`: a block of the diagonal's row.
[[gnu::noinline, gnu::aligned(64)]] void fwd(const double* diag, double* row_block, int n);
// col_block := col_block U^-1, U the upper factor in `diag`: a block of the diagonal's column.
[[gnu::noinline, gnu::aligned(64)]] void bdiv(const double* diag, double* col_block, int n);
// inner -= col_block row_block.
[[gnu::noinline, gnu::aligned(64)]] void bmod(const double* col_block, const double* row_block,
                                              double* inner, int n);
}  // namespace sparselu

}  // namespace bots
