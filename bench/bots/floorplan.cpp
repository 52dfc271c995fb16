#include "floorplan.hpp"

#include <algorithm>
#include <stdexcept>

namespace bots {
namespace {

// BOTS's inputs/floorplan/input.15: per cell its shapes (rows x cols), the neighbours it must touch
// on its left and above (-1: none; 0: the origin) and the next cell (0: none).
FloorplanInput make_input15() {
  FloorplanInput input;
  input.cells = {
      {{}, -1, -1, 1},  // the origin
      {{{3, 10}, {6, 5}}, 0, -1, 2},
      {{{2, 12}, {3, 8}, {4, 6}}, -1, 1, 3},
      {{{5, 12}, {6, 10}}, 2, 1, 4},
      {{{3, 8}, {4, 6}, {8, 3}}, -1, 3, 5},
      {{{4, 10}, {5, 8}, {8, 5}, {10, 4}}, -1, 2, 6},
      {{{3, 3}}, -1, 5, 7},
      {{{2, 16}, {4, 8}, {8, 4}}, 6, 5, 8},
      {{{2, 6}, {3, 4}, {4, 3}}, -1, 4, 9},
      {{{3, 3}}, 8, 4, 10},
      {{{5, 6}, {6, 5}}, 9, 4, 11},
      {{{4, 4}}, -1, 6, 12},
      {{{2, 12}, {4, 6}, {6, 4}, {12, 2}}, 7, 8, 13},
      {{{4, 9}, {6, 6}, {9, 4}}, -1, 9, 14},
      {{{3, 9}}, 13, 10, 15},
      {{{3, 22}, {6, 11}}, 11, 13, 0},
  };
  return input;
}

// The suite's answers for its inputs: input.5 is the first 5 cells of input.15.
int known_floorplan_area(int cell_count) {
  if (cell_count == 5) return 216;
  if (cell_count == 15) return 713;
  return -1;
}

// Writes `cell` onto `board` over `extent`; false when the extent leaves the board or overlaps a
// cell placed before.
bool lay_down(int cell, const CellExtent& extent, FloorplanLayout& layout) {
  if (extent.bottom >= floorplan_rows || extent.right >= floorplan_cols) return false;
  for (int row = extent.top; row <= extent.bottom; ++row) {
    auto& line = layout.board[static_cast<std::size_t>(row)];
    for (int col = extent.left; col <= extent.right; ++col) {
      std::int8_t& square = line[static_cast<std::size_t>(col)];
      if (square != 0) return false;
      square = static_cast<std::int8_t>(cell);
    }
  }
  return true;
}

}  // namespace

FloorplanInput floorplan_input15(int cell_count) {
  if (cell_count < 1 || cell_count > 15)
    throw std::invalid_argument("floorplan: the cell count must be in [1, 15], not " +
                                std::to_string(cell_count));
  FloorplanInput input = make_input15();
  input.cells.resize(static_cast<std::size_t>(cell_count) + 1);
  input.cells.back().next = 0;
  input.known_min_area = known_floorplan_area(cell_count);
  return input;
}

FloorplanLayout empty_floorplan_layout() {
  FloorplanLayout layout{};
  // The origin is a point left of the board's first square, so that the first cell starts there.
  layout.extents[0] = {0, 0, -1, -1};
  return layout;
}

void MinArea::offer(int area) {
  int current = area_.load(std::memory_order_relaxed);
  while (area < current && !area_.compare_exchange_weak(current, area, std::memory_order_relaxed)) {
  }
}

int corner_candidates(const FloorplanInput& input, const FloorplanLayout& layout, int cell,
                      int shape, CornerList& corners) {
  const FloorplanCell& placed = input.cells[static_cast<std::size_t>(cell)];
  const CellShape size = placed.shapes[static_cast<std::size_t>(shape)];
  const auto extent_of = [&layout](int other) {
    return layout.extents[static_cast<std::size_t>(other)];
  };
  if (placed.left_neighbour >= 0 && placed.upper_neighbour >= 0) {
    // Both neighbours fix the corner; it is kept when the cell reaches both of them. As in BOTS,
    // the reach is measured one square past the cell, so touching at a corner counts.
    const CellExtent left = extent_of(placed.left_neighbour);
    const CellExtent upper = extent_of(placed.upper_neighbour);
    const Corner corner{upper.bottom + 1, left.right + 1};
    const int reach_row = corner.row + size.rows;
    const int reach_col = corner.col + size.cols;
    if (corner.row <= left.bottom && reach_row >= left.top && corner.col <= upper.right &&
        reach_col >= upper.left) {
      corners[0] = corner;
      return 1;
    }
    return 0;
  }
  int count = 0;
  if (placed.left_neighbour >= 0) {
    // Right of the left neighbour, at every row where the two share at least one row.
    const CellExtent left = extent_of(placed.left_neighbour);
    const int last = std::min(left.bottom, floorplan_rows - 1);
    for (int row = std::max(left.top - size.rows + 1, 0); row <= last; ++row)
      corners[static_cast<std::size_t>(count++)] = {row, left.right + 1};
  } else {
    // Below the upper neighbour, at every column where the two share at least one column.
    const CellExtent upper = extent_of(placed.upper_neighbour);
    const int last = std::min(upper.right, floorplan_cols - 1);
    for (int col = std::max(upper.left - size.cols + 1, 0); col <= last; ++col)
      corners[static_cast<std::size_t>(count++)] = {upper.bottom + 1, col};
  }
  return count;
}

bool place_cell(const FloorplanInput& input, const FloorplanLayout& parent, int cell, int shape,
                Corner corner, FloorplanLayout& child, MinArea& best) {
  const FloorplanCell& placed = input.cells[static_cast<std::size_t>(cell)];
  const CellShape size = placed.shapes[static_cast<std::size_t>(shape)];
  const CellExtent extent{corner.row, corner.row + size.rows - 1, corner.col,
                          corner.col + size.cols - 1};
  child.board = parent.board;
  if (!lay_down(cell, extent, child)) return false;
  child.extents = parent.extents;
  child.extents[static_cast<std::size_t>(cell)] = extent;
  child.rows = std::max(parent.rows, extent.bottom + 1);
  child.cols = std::max(parent.cols, extent.right + 1);
  const int area = child.rows * child.cols;
  if (placed.next == 0) {
    best.offer(area);
    return false;
  }
  return area < best.get();
}

void search_floorplan_sequential(const FloorplanInput& input, const FloorplanLayout& layout,
                                 int cell, MinArea& best) {
  const FloorplanCell& placed = input.cells[static_cast<std::size_t>(cell)];
  FloorplanLayout child;
  CornerList corners;
  for (int shape = 0; shape < static_cast<int>(placed.shapes.size()); ++shape) {
    const int count = corner_candidates(input, layout, cell, shape, corners);
    for (int i = 0; i < count; ++i)
      if (place_cell(input, layout, cell, shape, corners[static_cast<std::size_t>(i)], child, best))
        search_floorplan_sequential(input, child, placed.next, best);
  }
}

namespace {

struct VersaSearch {
  versa::Runtime* rt;
  const FloorplanInput* input;
  MinArea* best;
};

// A layout whose next cell is being placed by child tasks. It lives on its task's stack until
// the task's sync, so a child needs only its address, a shape and a corner (24 bytes, inline).
struct FloorplanNode {
  const VersaSearch* search;
  const FloorplanLayout* layout;
  int cell;
  int level;
};

void add_cell_versa(const VersaSearch& search, const FloorplanLayout& layout, int cell, int level);

void place_cell_versa(const FloorplanNode& node, int shape, Corner corner) {
  const VersaSearch& search = *node.search;
  FloorplanLayout child;
  if (!place_cell(*search.input, *node.layout, node.cell, shape, corner, child, *search.best))
    return;
  const int next = search.input->cells[static_cast<std::size_t>(node.cell)].next;
  if (node.level + 1 < floorplan_cutoff)
    add_cell_versa(search, child, next, node.level + 1);
  else
    search_floorplan_sequential(*search.input, child, next, *search.best);
}

void add_cell_versa(const VersaSearch& search, const FloorplanLayout& layout, int cell, int level) {
  const FloorplanNode node{&search, &layout, cell, level};
  const auto shapes =
      static_cast<int>(search.input->cells[static_cast<std::size_t>(cell)].shapes.size());
  CornerList corners;
  for (int shape = 0; shape < shapes; ++shape) {
    const int count = corner_candidates(*search.input, layout, cell, shape, corners);
    for (int i = 0; i < count; ++i)
      search.rt->spawn("floorplan", [&node, shape, corner = corners[static_cast<std::size_t>(i)]] {
        place_cell_versa(node, shape, corner);
      });
  }
  search.rt->sync();
}

}  // namespace

Floorplan::Floorplan(int cell_count) : input_(floorplan_input15(cell_count)) {
  expected_area_ = input_.known_min_area;
  if (expected_area_ < 0) {
    MinArea reference{floorplan_rows * floorplan_cols};
    search_floorplan_sequential(input_, empty_floorplan_layout(), 1, reference);
    expected_area_ = reference.get();
  }
}

std::string Floorplan::input() const {
  return "input.15, " + std::to_string(input_.cells.size() - 1) + " cells";
}

void Floorplan::run_sequential() {
  search_floorplan_sequential(input_, empty_floorplan_layout(), 1, best_);
}

void Floorplan::run_versa(versa::Runtime& rt) {
  const VersaSearch search{&rt, &input_, &best_};
  rt.spawn("floorplan", [&search] {
    const FloorplanLayout empty = empty_floorplan_layout();
    add_cell_versa(search, empty, 1, 0);
  });
  rt.sync();
}

std::string Floorplan::verify() const {
  if (min_area() == expected_area_) return {};
  return "minimum area " + std::to_string(min_area()) + ", expected " +
         std::to_string(expected_area_);
}

}  // namespace bots
