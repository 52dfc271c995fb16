#include "interaction_lists.hpp"

#include <array>
#include <cstddef>

#include "parallel_for.hpp"

namespace fmm {

namespace {

// The 27 cells of one level around a cell, the cell itself in the middle: slot
// (dx + 1) * 9 + (dy + 1) * 3 + (dz + 1) holds the cell at offset (dx, dy, dz), or -1 where that
// cell is empty or outside the root. The slots are in the order the lists visit neighbours in.
using Neighbours = std::array<std::int32_t, 27>;
constexpr int self_slot = 13;

// Every cell's neighbours, from its parent's: the cell at offset d from c lies in the parent's
// neighbour at offset (c + d) / 2 - c / 2 (each component -1, 0 or 1), in the octant of the low
// bits of c + d. Level by level from the root, so that the parents' are known; this replaces a
// binary search per neighbour in the level's cells by a look-up among at most 8 children.
std::vector<Neighbours> neighbours_of_cells(const Octree& tree) {
  const std::vector<Cell>& cells = tree.cells();
  std::vector<Neighbours> neighbours(cells.size());
  neighbours[0].fill(-1);
  neighbours[0][self_slot] = 0;
  for (int level = 1; level < tree.levels(); ++level) {
    const std::size_t first = tree.level_begin(level);
    const std::int64_t side = std::int64_t{1} << level;
    const auto find = [&](std::size_t begin, std::size_t end) {
      for (std::size_t c = first + begin; c < first + end; ++c) {
        const Cell& cell = cells[c];
        const Neighbours& around_parent = neighbours[static_cast<std::size_t>(cell.parent)];
        const std::int64_t at[3] = {cell.x, cell.y, cell.z};
        for (int slot = 0; slot < 27; ++slot) {
          const int offset[3] = {slot / 9 - 1, slot / 3 % 3 - 1, slot % 3 - 1};
          std::int64_t to[3];
          int parent_slot = 0;
          unsigned octant = 0;
          bool inside = true;
          for (int d = 0; d < 3; ++d) {
            to[d] = at[d] + offset[d];
            inside = inside && to[d] >= 0 && to[d] < side;
            parent_slot = parent_slot * 3 + static_cast<int>((to[d] >> 1) - (at[d] >> 1) + 1);
            octant = octant << 1 | static_cast<unsigned>(to[d] & 1);
          }
          std::int32_t found = -1;
          const std::int32_t parent =
              inside ? around_parent[static_cast<std::size_t>(parent_slot)] : -1;
          if (parent >= 0) {
            const Cell& p = cells[static_cast<std::size_t>(parent)];
            for (std::int32_t child = p.first_child; child < p.first_child + p.child_count; ++child)
              if ((cells[static_cast<std::size_t>(child)].key & 7) == octant) found = child;
          }
          neighbours[c][static_cast<std::size_t>(slot)] = found;
        }
      }
    };
    // A level has a few thousand cells: the default grain would leave it to one thread.
    example::parallel_for(tree.level_begin(level + 1) - first, find, 64);
  }
  return neighbours;
}

// Calls visit(index) for each existing cell of the same level that touches cell c, c excluded,
// in the order of their offsets (dx, then dy, then dz).
template <typename Visit>
void for_each_colleague(const std::vector<Neighbours>& neighbours, std::int32_t c, Visit visit) {
  const Neighbours& around = neighbours[static_cast<std::size_t>(c)];
  for (int slot = 0; slot < 27; ++slot)
    if (slot != self_slot && around[static_cast<std::size_t>(slot)] >= 0)
      visit(around[static_cast<std::size_t>(slot)]);
}

// The lists of one cell, gathered in buffers that are reused from cell to cell and then copied
// once at their final size: growing each cell's vectors entry by entry reallocates them many
// times.
struct ListsOfCell {
  std::vector<std::int32_t> u, v, w;
};

// Sorts the descendants of `cell` (a colleague of `leaf`, or a descendant of one that touches
// it) into U(leaf) and W(leaf).
void collect_near_descendants(const std::vector<Cell>& cells, std::int32_t leaf, std::int32_t cell,
                              ListsOfCell& lists) {
  const Cell& c = cells[static_cast<std::size_t>(cell)];
  if (c.is_leaf()) {
    lists.u.push_back(cell);
    return;
  }
  for (std::int32_t child = c.first_child; child < c.first_child + c.child_count; ++child) {
    if (cells_touch(cells[static_cast<std::size_t>(leaf)], cells[static_cast<std::size_t>(child)]))
      collect_near_descendants(cells, leaf, child, lists);
    else
      lists.w.push_back(child);
  }
}

// U, V and W of cell b into `lists` (emptied first).
void collect_lists(const Octree& tree, const std::vector<Neighbours>& neighbours, std::size_t b,
                   ListsOfCell& lists) {
  const std::vector<Cell>& cells = tree.cells();
  const std::int32_t self = static_cast<std::int32_t>(b);
  const Cell& cell = cells[b];
  lists.u.clear(), lists.v.clear(), lists.w.clear();
  if (cell.parent >= 0) {
    for_each_colleague(neighbours, cell.parent, [&](std::int32_t uncle) {
      const Cell& u = cells[static_cast<std::size_t>(uncle)];
      for (std::int32_t child = u.first_child; child < u.first_child + u.child_count; ++child)
        if (!cells_touch(cell, cells[static_cast<std::size_t>(child)])) lists.v.push_back(child);
    });
  }
  if (!cell.is_leaf()) return;
  lists.u.push_back(self);
  for_each_colleague(neighbours, self, [&](std::int32_t colleague) {
    collect_near_descendants(cells, self, colleague, lists);
  });
  // Coarser leaves that touch this leaf are colleagues of one of its ancestors.
  for (std::int32_t ancestor = cell.parent; ancestor >= 0;
       ancestor = cells[static_cast<std::size_t>(ancestor)].parent) {
    for_each_colleague(neighbours, ancestor, [&](std::int32_t other) {
      const Cell& o = cells[static_cast<std::size_t>(other)];
      if (o.is_leaf() && cells_touch(o, cell)) lists.u.push_back(other);
    });
  }
}

}  // namespace

InteractionLists build_interaction_lists(const Octree& tree, std::size_t direct_limit) {
  const std::vector<Cell>& cells = tree.cells();
  const std::size_t count = cells.size();
  const std::vector<Neighbours> neighbours = neighbours_of_cells(tree);
  InteractionLists lists;
  lists.u.resize(count), lists.v.resize(count), lists.w.resize(count), lists.x.resize(count);
  lists.w_direct.resize(count);
  // Each cell's lists depend on the tree alone: the cells are cut into chunks, one per thread.
  example::parallel_for(
      count,
      [&](std::size_t begin, std::size_t end) {
        ListsOfCell buffers;
        for (std::size_t b = begin; b < end; ++b) {
          collect_lists(tree, neighbours, b, buffers);
          lists.u[b].assign(buffers.u.begin(), buffers.u.end());
          lists.v[b].assign(buffers.v.begin(), buffers.v.end());
          const auto few_points = [&](std::int32_t a) {
            return cells[static_cast<std::size_t>(a)].count() <= direct_limit;
          };
          for (std::int32_t a : buffers.w)
            (few_points(a) ? lists.w_direct[b] : lists.w[b]).push_back(a);
        }
      },
      256);
  // X is W transposed, each X(a) in the order of b.
  for (std::size_t b = 0; b < count; ++b)
    for (std::int32_t a : lists.w[b])
      lists.x[static_cast<std::size_t>(a)].push_back(static_cast<std::int32_t>(b));
  return lists;
}

}  // namespace fmm
