// nqueens on oneTBB: a task_group per board, one run() per column, then wait(). The arena of
// `threads` threads counts the calling thread.
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <numeric>

#include "nqueens.hpp"

namespace bots {
namespace {

std::int64_t count_queens_tbb(int n, int row, const QueenBoard& board) {
  if (row == n) return 1;
  std::array<std::int64_t, max_queens> solutions{};
  tbb::task_group group;
  for (int column = 0; column < n; ++column) {
    group.run([&board, &solutions, n, row, column] {
      QueenBoard child;
      extend_board(board, row, column, child);
      if (queens_compatible(child, row + 1))
        solutions[static_cast<std::size_t>(column)] = count_queens_tbb(n, row + 1, child);
    });
  }
  group.wait();
  return std::accumulate(solutions.begin(), solutions.begin() + n, std::int64_t{0});
}

}  // namespace

void NQueens::run_tbb(int threads) {
  tbb::task_arena arena(threads);
  arena.execute([this] { solutions_ = count_queens_tbb(n_, 0, QueenBoard{}); });
}

}  // namespace bots
