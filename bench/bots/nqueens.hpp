// The n-queens problem: count the placements of n queens on an n x n board that attack no other
// queen, with a task per (partial board, column) and no cut-off (BOTS nqueens, after Cilk's): each
// task extends its parent's board by one queen and checks the whole board again, so the work per
// task is small and the time measures what a task costs. The input is the board size; the
// verification compares with the known solution counts (OEIS A000170).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "kernel.hpp"
#include "versa/versa.hpp"

namespace bots {

// Boards up to this size: a board is a fixed array, so that a task's board needs no allocation.
inline constexpr int max_queens = 16;

// queens[r] is the column of the queen in row r; rows [0, row count) are filled.
using QueenBoard = std::array<std::int8_t, max_queens>;

class NQueens {
 public:
  static constexpr const char* name = "nqueens";

  explicit NQueens(Scale scale) : NQueens(scale == Scale::bench ? 13 : 8) {}
  // Throws std::invalid_argument unless 1 <= n <= max_queens.
  explicit NQueens(int n);

  std::string input() const { return "n=" + std::to_string(n_); }
  void reset() { solutions_ = -1; }
  void run_sequential();
  void run_versa(versa::Runtime& rt);
  void run_openmp(int threads);
  void run_tbb(int threads);
  std::string verify() const;
  // A task per column of every board that passed its check with rows left to fill: n times the
  // number of such boards (the empty one included), counted once in the constructor.
  std::uint64_t tasks() const { return tasks_; }

  std::int64_t solutions() const { return solutions_; }
  // Makes verify() see `solutions` as the last run's answer (for tests of the verification).
  void set_solutions(std::int64_t solutions) { solutions_ = solutions; }

 private:
  int n_;
  std::uint64_t tasks_;
  std::int64_t solutions_ = -1;
};

// The shared leaf code of every system.

// Copies rows [0, row) of `parent` into `child` and puts the next queen in `column` of `row`.
inline void extend_board(const QueenBoard& parent, int row, int column, QueenBoard& child) {
  child = parent;
  child[static_cast<std::size_t>(row)] = static_cast<std::int8_t>(column);
}

// Whether no two of the queens in rows [0, rows) attack each other (BOTS's `ok`: all pairs, not
// only the new queen against the others, as the suite measures it).
[[gnu::noinline, gnu::aligned(64)]] bool queens_compatible(const QueenBoard& board, int rows);

// Solutions that complete `board`, whose rows [0, row) are filled and compatible, sequentially.
std::int64_t count_queens_sequential(int n, int row, const QueenBoard& board);

// The number of solutions for an n x n board (A000170), for 1 <= n <= max_queens.
std::int64_t known_queens_solutions(int n);

}  // namespace bots
