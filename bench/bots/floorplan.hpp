// Floorplan: the smallest rectangular footprint of a chip whose cells each have a few shapes and
// must touch given neighbours (BOTS floorplan, after Cray's Application Kernel Matrix). A branch
// and bound search places the cells in a fixed order, each in every shape and at every corner
// position next to its neighbours, and prunes a partial layout whose footprint is no smaller than
// the best complete one so far. A task per (shape, position) down to the cut-off depth; below it
// the search goes on sequentially inside the task. The best area is shared by all tasks as an
// atomic minimum, in every system: BOTS's OpenMP code takes a critical section instead, but the
// update lies in the shared leaf code, and improvements are too rare for the choice to show.
// Unlike BOTS, a cell that would leave the 64 x 64 board does not fit (BOTS writes past it).
//
// Input: the cells of BOTS's inputs/floorplan/input.15 (reproduced as data in floorplan.cpp); its
// first 5 cells are the suite's input.5. Verification: the minimum area the suite gives with
// its inputs (216 for 5 cells, 713 for 15), else that of a sequential search made in the
// constructor.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel.hpp"
#include "versa/versa.hpp"

namespace bots {

inline constexpr int floorplan_rows = 64;
inline constexpr int floorplan_cols = 64;
inline constexpr int floorplan_max_cells = 24;
// BOTS's default cut-off: tasks place the cells of the first 5 levels of the search.
inline constexpr int floorplan_cutoff = 5;

struct CellShape {
  int rows;
  int cols;
};

struct FloorplanCell {
  std::vector<CellShape> shapes;
  int left_neighbour;   // the cell this one's left side touches, or -1
  int upper_neighbour;  // the cell this one's top touches, or -1
  int next;             // the cell placed after this one; 0 after the last
};

// cells[0] is the origin the first cell is placed against; cells[1] is placed first.
struct FloorplanInput {
  std::vector<FloorplanCell> cells;
  int known_min_area = -1;  // from the suite, or -1
};

// The first `cell_count` cells of BOTS's input.15, the last of them made the last placed.
// Throws std::invalid_argument unless 1 <= cell_count <= 15.
FloorplanInput floorplan_input15(int cell_count);

// A cell's rows [top, bottom] and columns [left, right] on the board.
struct CellExtent {
  int top;
  int bottom;
  int left;
  int right;
};

struct Corner {
  int row;
  int col;
};

// Corner positions a shape may take: at most one per row or column of the board.
using CornerList = std::array<Corner, floorplan_rows>;

// A partial layout: the cells placed so far, on the board and as extents, and their footprint.
struct FloorplanLayout {
  std::array<std::array<std::int8_t, floorplan_cols>, floorplan_rows> board;  // 0 or a cell
  std::array<CellExtent, floorplan_max_cells + 1> extents;
  int rows;  // the footprint: rows [0, rows) and columns [0, cols) hold every placed cell
  int cols;
};

// The layout before the first cell: an empty board with the origin's extent.
FloorplanLayout empty_floorplan_layout();

// The best complete area so far, shared by all tasks of a search. Reads are relaxed: a stale
// bound prunes less but never wrongly, and the final value is read after the tasks have joined.
class MinArea {
 public:
  explicit MinArea(int area) : area_(area) {}
  int get() const { return area_.load(std::memory_order_relaxed); }
  void set(int area) { area_.store(area, std::memory_order_relaxed); }
  // Lowers the bound to `area` unless it is already lower (an atomic minimum).
  void offer(int area);

 private:
  std::atomic<int> area_;
};

class Floorplan {
 public:
  static constexpr const char* name = "floorplan";

  explicit Floorplan(Scale scale) : Floorplan(scale == Scale::bench ? 15 : 10) {}
  // The first `cell_count` cells of input.15.
  explicit Floorplan(int cell_count);

  std::string input() const;
  void reset() { best_.set(floorplan_rows * floorplan_cols); }
  void run_sequential();
  void run_versa(versa::Runtime& rt);
  void run_openmp(int threads);
  void run_tbb(int threads);
  std::string verify() const;
  std::uint64_t tasks() const { return 0; }

  int min_area() const { return best_.get(); }
  // Makes verify() see `area` as the last run's answer (for tests of the verification).
  void set_min_area(int area) { best_.set(area); }

 private:
  FloorplanInput input_;
  int expected_area_;
  MinArea best_{floorplan_rows * floorplan_cols};
};

// The shared leaf code of every system.

// Fills `corners` with the top-left positions where `shape` of `cell` touches its neighbours as
// placed in `layout`; returns how many.
int corner_candidates(const FloorplanInput& input, const FloorplanLayout& layout, int cell,
                      int shape, CornerList& corners);

// Makes `child` the `parent` layout plus `cell` in `shape` at `corner`, offering a complete
// layout's area to `best`. Returns whether the search goes on from `child` with the next cell:
// the cell fits, is not the last, and the footprint is smaller than the best so far.
bool place_cell(const FloorplanInput& input, const FloorplanLayout& parent, int cell, int shape,
                Corner corner, FloorplanLayout& child, MinArea& best);

// Searches every placement of `cell` and the cells after it on `layout`, sequentially: the whole
// sequential run, and every system's search below the cut-off.
void search_floorplan_sequential(const FloorplanInput& input, const FloorplanLayout& layout,
                                 int cell, MinArea& best);

}  // namespace bots
