// nqueens on OpenMP tasks, as BOTS writes it: an untied `task` per column, each copying the
// parent's board, then `taskwait`; no cut-off.
#include <omp.h>

#include <numeric>

#include "nqueens.hpp"

namespace bots {
namespace {

std::int64_t count_queens_openmp(int n, int row, const QueenBoard& board) {
  if (row == n) return 1;
  std::array<std::int64_t, max_queens> solutions{};
  for (int column = 0; column < n; ++column) {
#pragma omp task untied default(none) shared(board, solutions) firstprivate(n, row, column)
    {
      QueenBoard child;
      extend_board(board, row, column, child);
      if (queens_compatible(child, row + 1))
        solutions[static_cast<std::size_t>(column)] = count_queens_openmp(n, row + 1, child);
    }
  }
#pragma omp taskwait
  return std::accumulate(solutions.begin(), solutions.begin() + n, std::int64_t{0});
}

}  // namespace

void NQueens::run_openmp(int threads) {
#pragma omp parallel num_threads(threads)
#pragma omp single
  solutions_ = count_queens_openmp(n_, 0, QueenBoard{});
}

}  // namespace bots
