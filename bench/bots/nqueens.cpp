#include "nqueens.hpp"

#include <numeric>
#include <stdexcept>

namespace bots {
namespace {

// Boards whose rows [0, row) hold compatible queens and that still have rows to fill, below and
// including the given one. The free columns and diagonals are bit masks, so that counting is far
// cheaper than the search it predicts.
std::uint64_t count_open_boards(int n, int row, std::uint32_t columns, std::uint32_t diagonals,
                                std::uint32_t antidiagonals) {
  if (row == n) return 0;
  const std::uint32_t all = (std::uint32_t{1} << n) - 1;
  std::uint64_t boards = 1;
  for (std::uint32_t free = all & ~(columns | diagonals | antidiagonals); free != 0;
       free &= free - 1) {
    const std::uint32_t bit = free & -free;
    boards += count_open_boards(n, row + 1, columns | bit, (diagonals | bit) << 1,
                                (antidiagonals | bit) >> 1);
  }
  return boards;
}

// A board under search and its children's results. It lives on its task's stack until the task's
// sync, so a child task needs only its address and its column (16 bytes, stored inline); each
// child writes its own entry of `solutions`.
struct QueensNode {
  versa::Runtime* rt;
  int n;
  int row;  // rows [0, row) of `board` are filled
  QueenBoard board;
  std::array<std::int64_t, max_queens> solutions;
};

std::int64_t count_queens_versa(QueensNode& node);

// The node is built only for a board that passed its check, as the other systems build their
// results array: most tasks fail it, and clearing a node is most of a failing task's work.
void place_queen_versa(QueensNode& parent, int column) {
  QueenBoard board;
  extend_board(parent.board, parent.row, column, board);
  if (!queens_compatible(board, parent.row + 1)) return;
  QueensNode child{parent.rt, parent.n, parent.row + 1, board, {}};
  parent.solutions[static_cast<std::size_t>(column)] = count_queens_versa(child);
}

std::int64_t count_queens_versa(QueensNode& node) {
  if (node.row == node.n) return 1;
  const auto columns = static_cast<std::size_t>(node.n);
  for (std::size_t column = 0; column < columns; ++column) {
    node.solutions[column] = 0;
    node.rt->spawn("nqueens",
                   [&node, column] { place_queen_versa(node, static_cast<int>(column)); });
  }
  node.rt->sync();
  return std::accumulate(node.solutions.begin(), node.solutions.begin() + node.n, std::int64_t{0});
}

}  // namespace

NQueens::NQueens(int n) : n_(n) {
  if (n < 1 || n > max_queens)
    throw std::invalid_argument("nqueens: n must be in [1, " + std::to_string(max_queens) +
                                "], not " + std::to_string(n));
  tasks_ = static_cast<std::uint64_t>(n) * count_open_boards(n, 0, 0, 0, 0);
}

bool queens_compatible(const QueenBoard& board, int rows) {
  for (int i = 0; i < rows; ++i) {
    const int p = board[static_cast<std::size_t>(i)];
    for (int j = i + 1; j < rows; ++j) {
      const int q = board[static_cast<std::size_t>(j)];
      const int distance = j - i;
      if (q == p || q == p - distance || q == p + distance) return false;
    }
  }
  return true;
}

std::int64_t count_queens_sequential(int n, int row, const QueenBoard& board) {
  if (row == n) return 1;
  std::int64_t solutions = 0;
  for (int column = 0; column < n; ++column) {
    QueenBoard next;
    extend_board(board, row, column, next);
    if (queens_compatible(next, row + 1)) solutions += count_queens_sequential(n, row + 1, next);
  }
  return solutions;
}

std::int64_t known_queens_solutions(int n) {
  static constexpr std::array<std::int64_t, max_queens> solutions = {
      1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};
  return solutions.at(static_cast<std::size_t>(n - 1));
}

void NQueens::run_sequential() { solutions_ = count_queens_sequential(n_, 0, QueenBoard{}); }

void NQueens::run_versa(versa::Runtime& rt) {
  rt.spawn("nqueens", [this, &rt] {
    QueensNode root{&rt, n_, 0, {}, {}};
    solutions_ = count_queens_versa(root);
  });
  rt.sync();
}

std::string NQueens::verify() const {
  const std::int64_t expected = known_queens_solutions(n_);
  if (solutions_ == expected) return {};
  return std::to_string(n_) + " queens: " + std::to_string(solutions_) + " solutions, expected " +
         std::to_string(expected);
}

}  // namespace bots
