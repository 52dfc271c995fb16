// An adaptive octree in Morton (Z) order over the bounding cube of a point set.
//
// The points are sorted by the Morton code of their position, so that every cell's points are
// one contiguous range of the sorted points. A cell is split while it holds more than
// `leaf_size` points and is above `max_level`; the level cap stops coincident points from
// recursing forever. Only non-empty cells exist. Cells are stored level by level, and within a
// level in Morton order, so the cells of one level are a contiguous index range and the
// children of a cell are consecutive: groups of cells for later parallel work are ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "points.hpp"
#include "uninitialised_array.hpp"

namespace fmm {

// 21 levels below the root fill 63 bits of a Morton code.
inline constexpr int max_octree_level = 21;

struct Cell {
  int level = 0;
  std::uint32_t x = 0, y = 0, z = 0;  // integer coordinates among the 2^level cells per side
  std::uint64_t key = 0;              // Morton code of (x, y, z) at this level: 3 * level bits
  std::size_t begin = 0, end = 0;     // its points: [begin, end) of Octree::points()
  std::int32_t parent = -1;           // -1 for the root
  std::int32_t first_child = -1;      // children are [first_child, first_child + child_count)
  int child_count = 0;

  bool is_leaf() const { return child_count == 0; }
  std::size_t count() const { return end - begin; }
};

// The points in the tree's order, structure of arrays as Points, in arrays that the tree fills
// in parallel (uninitialised_array.hpp).
struct SortedPoints {
  UninitialisedArray<double> x, y, z, charge;

  std::size_t size() const { return x.size(); }
};

class Octree {
 public:
  // Builds the tree over `points`. Preconditions (checked by fmm::evaluate): at least one point,
  // finite coordinates, leaf_size >= 1, 0 <= max_level <= max_octree_level.
  Octree(const Points& points, std::size_t leaf_size, int max_level = max_octree_level);

  // The points in the Morton order of their leaves (each cell's points are one range; inside a
  // leaf, in no particular order); original_index()[i] is the input index of sorted point i.
  const SortedPoints& points() const { return sorted_; }
  const UninitialisedArray<std::size_t>& original_index() const { return original_index_; }

  const std::vector<Cell>& cells() const { return cells_; }
  // The cells of level l are [level_begin(l), level_begin(l + 1)); l in [0, levels()).
  std::size_t level_begin(int level) const { return level_begin_[level]; }
  int levels() const { return static_cast<int>(level_begin_.size()) - 1; }  // non-empty ones
  std::size_t leaf_size() const { return leaf_size_; }
  int max_level() const { return max_level_; }

  // The index of the cell at `level` with integer coordinates (x, y, z), or -1 when that cell is
  // empty or out of range. Binary search in the level's Morton-ordered range.
  std::int32_t find(int level, std::int64_t x, std::int64_t y, std::int64_t z) const;

  // Geometry: the root cube is [origin, origin + width]^3.
  double width(int level) const;
  double origin(int axis) const { return origin_[axis]; }
  void center(const Cell& cell, double& cx, double& cy, double& cz) const;

 private:
  SortedPoints sorted_;
  UninitialisedArray<std::size_t> original_index_;
  // Sorts the points of [begin, end), one cell's, by their whole Morton keys.
  void sort_by_whole_key(std::size_t begin, std::size_t end);

  // Morton codes at max_octree_level, in the order of the points: sorted, but inside a leaf of
  // level 11 or less only by the bits of levels 1 to 11.
  UninitialisedArray<std::uint64_t> point_keys_;
  std::vector<Cell> cells_;
  std::vector<std::size_t> level_begin_;  // levels() + 1 entries, the last one cells_.size()
  double origin_[3] = {0, 0, 0};
  double width_ = 1;
  std::size_t leaf_size_;
  int max_level_;
};

// Interleaves the bits of x, y, z (x most significant in each triple) into a Morton code.
std::uint64_t morton_key(std::uint32_t x, std::uint32_t y, std::uint32_t z);

// Whether the closed boxes of two cells (of any levels) intersect: overlap, share a face, an
// edge or a corner.
bool cells_touch(const Cell& a, const Cell& b);

}  // namespace fmm
