#include "interaction_lists.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace fmm {

namespace {

// Calls visit(index) for each existing cell of the same level that touches cells[c], c excluded.
template <typename Visit>
void for_each_colleague(const Octree& tree, std::int32_t c, Visit visit) {
  const Cell& cell = tree.cells()[static_cast<std::size_t>(c)];
  for (int dx = -1; dx <= 1; ++dx)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dz = -1; dz <= 1; ++dz) {
        if (dx == 0 && dy == 0 && dz == 0) continue;
        const std::int32_t found = tree.find(cell.level, std::int64_t{cell.x} + dx,
                                             std::int64_t{cell.y} + dy, std::int64_t{cell.z} + dz);
        if (found >= 0) visit(found);
      }
}

// Sorts the descendants of `cell` (a colleague of `leaf`, or a descendant of one that touches
// it) into U(leaf) and W(leaf).
void collect_near_descendants(const Octree& tree, std::int32_t leaf, std::int32_t cell,
                              InteractionLists& lists) {
  const std::vector<Cell>& cells = tree.cells();
  const Cell& c = cells[static_cast<std::size_t>(cell)];
  if (c.is_leaf()) {
    lists.u[static_cast<std::size_t>(leaf)].push_back(cell);
    return;
  }
  for (std::int32_t child = c.first_child; child < c.first_child + c.child_count; ++child) {
    if (cells_touch(cells[static_cast<std::size_t>(leaf)], cells[static_cast<std::size_t>(child)]))
      collect_near_descendants(tree, leaf, child, lists);
    else
      lists.w[static_cast<std::size_t>(leaf)].push_back(child);
  }
}

}  // namespace

InteractionLists build_interaction_lists(const Octree& tree, std::size_t direct_limit) {
  const std::vector<Cell>& cells = tree.cells();
  const std::size_t count = cells.size();
  InteractionLists lists;
  lists.u.resize(count), lists.v.resize(count), lists.w.resize(count), lists.x.resize(count);
  lists.w_direct.resize(count);
  for (std::size_t b = 0; b < count; ++b) {
    const std::int32_t self = static_cast<std::int32_t>(b);
    const Cell& cell = cells[b];
    if (cell.parent >= 0) {
      for_each_colleague(tree, cell.parent, [&](std::int32_t uncle) {
        const Cell& u = cells[static_cast<std::size_t>(uncle)];
        for (std::int32_t child = u.first_child; child < u.first_child + u.child_count; ++child)
          if (!cells_touch(cell, cells[static_cast<std::size_t>(child)]))
            lists.v[b].push_back(child);
      });
    }
    if (!cell.is_leaf()) continue;
    lists.u[b].push_back(self);
    for_each_colleague(tree, self, [&](std::int32_t colleague) {
      collect_near_descendants(tree, self, colleague, lists);
    });
    // Coarser leaves that touch this leaf are colleagues of one of its ancestors.
    for (std::int32_t ancestor = cell.parent; ancestor >= 0;
         ancestor = cells[static_cast<std::size_t>(ancestor)].parent) {
      for_each_colleague(tree, ancestor, [&](std::int32_t other) {
        const Cell& o = cells[static_cast<std::size_t>(other)];
        if (o.is_leaf() && cells_touch(o, cell)) lists.u[b].push_back(other);
      });
    }
  }
  for (std::size_t b = 0; b < count; ++b) {
    std::vector<std::int32_t>& w = lists.w[b];
    const auto few_points = [&](std::int32_t a) {
      return cells[static_cast<std::size_t>(a)].count() <= direct_limit;
    };
    std::copy_if(w.begin(), w.end(), std::back_inserter(lists.w_direct[b]), few_points);
    w.erase(std::remove_if(w.begin(), w.end(), few_points), w.end());
    for (std::int32_t a : w)
      lists.x[static_cast<std::size_t>(a)].push_back(static_cast<std::int32_t>(b));
  }
  return lists;
}

}  // namespace fmm
