#include "group_tree.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <iterator>
#include <map>
#include <stdexcept>
#include <utility>

namespace fmm {

const char* to_string(Kernel kernel) {
  static constexpr const char* names[kernel_count] = {"p2m",    "m2m", "compress",  "m2l",
                                                      "p2l",    "m2p", "p2p_inner", "p2p_pair",
                                                      "expand", "l2l", "l2p"};
  return names[static_cast<int>(kernel)];
}

Pass pass_of(Kernel kernel) {
  switch (kernel) {
    case Kernel::p2m:
    case Kernel::m2m:
    case Kernel::compress:
      return Pass::upward;
    case Kernel::m2l:
    case Kernel::p2l:
    case Kernel::m2p:
      return Pass::far_field;
    case Kernel::p2p_inner:
    case Kernel::p2p_pair:
      return Pass::near_field;
    case Kernel::expand:
    case Kernel::l2l:
    case Kernel::l2p:
      return Pass::downward;
  }
  return Pass::upward;
}

int priority_of(Kernel kernel) {
  switch (pass_of(kernel)) {
    case Pass::upward:
      return 3;
    case Pass::far_field:
      return kernel == Kernel::m2l ? 2 : 1;
    case Pass::downward:
      return 2;
    case Pass::near_field:
      return 0;
  }
  return 0;
}

int stride(Kernel kernel) {
  switch (kernel) {
    case Kernel::p2m:
    case Kernel::l2p:
    case Kernel::p2l:
    case Kernel::m2p:
      return 6;
    case Kernel::m2m:
    case Kernel::l2l:
    case Kernel::m2l:
      return 3;
    case Kernel::p2p_inner:
    case Kernel::p2p_pair:
      return 4;
    case Kernel::compress:
    case Kernel::expand:
      return 0;
  }
  return 0;
}

namespace {

std::int32_t to_int(std::size_t value) { return static_cast<std::int32_t>(value); }

// Builds the tasks of one kernel: entries are appended per (source group, target group), and
// the tasks come out in the order of those keys.
class TaskCollector {
 public:
  explicit TaskCollector(Kernel kernel) : kernel_(kernel) {}

  void add(std::size_t source, std::size_t target, std::initializer_list<std::int32_t> entry,
           double interactions) {
    GroupTask& task = tasks_[{source, target}];
    task.work.insert(task.work.end(), entry);
    task.interactions += interactions;
  }

  void move_to(std::vector<GroupTask>& out) {
    for (auto& [key, task] : tasks_) {
      task.kernel = kernel_;
      task.source = key.first;
      task.target = key.second;
      out.push_back(std::move(task));
    }
    tasks_.clear();
  }

 private:
  Kernel kernel_;
  std::map<std::pair<std::size_t, std::size_t>, GroupTask> tasks_;
};

}  // namespace

void GroupTree::split_near_field(std::size_t first) {
  // The near field is most of the work and has no dependencies between its tasks: cut in
  // pieces of at most 1/64 of it (and at least 10^5 pairs, about 0.3 ms), its tasks spread over
  // workers and devices. A piece is a run of whole entries, as only results are written, with
  // `add`.
  double total = 0;
  for (std::size_t t = first; t < tasks_.size(); ++t) total += tasks_[t].interactions;
  const double piece = std::max(total / 64, 1e5);
  std::vector<GroupTask> pieces;
  for (std::size_t t = first; t < tasks_.size(); ++t) {
    const GroupTask& task = tasks_[t];
    const std::size_t stride = static_cast<std::size_t>(fmm::stride(task.kernel));
    GroupTask current{task.kernel, task.source, task.target, {}, 0};
    for (std::size_t e = 0; e < task.work.size() / stride; ++e) {
      const std::int32_t* entry = task.work.data() + e * stride;
      current.work.insert(current.work.end(), entry, entry + stride);
      current.interactions += static_cast<double>(entry[1]) * static_cast<double>(entry[3]);
      if (current.interactions >= piece) {
        pieces.push_back(std::move(current));
        current = {task.kernel, task.source, task.target, {}, 0};
      }
    }
    if (!current.work.empty()) pieces.push_back(std::move(current));
  }
  tasks_.resize(first);
  std::move(pieces.begin(), pieces.end(), std::back_inserter(tasks_));
}

GroupTree::GroupTree(const Octree& tree, const InteractionLists& lists, std::size_t group_size) {
  if (group_size == 0) throw std::invalid_argument("fmm: group size is 0");
  const std::vector<Cell>& cells = tree.cells();

  // Cell groups: each level's Morton-ordered range, cut every group_size cells.
  std::vector<std::size_t> group_of_cell(cells.size());
  for (int level = 0; level < tree.levels(); ++level)
    for (std::size_t first = tree.level_begin(level); first < tree.level_begin(level + 1);
         first += group_size) {
      const std::size_t count = std::min(group_size, tree.level_begin(level + 1) - first);
      for (std::size_t c = first; c < first + count; ++c) group_of_cell[c] = cell_groups_.size();
      cell_groups_.push_back({level, first, count});
    }
  auto local_cell = [&](std::size_t c) {
    return to_int(c - cell_groups_[group_of_cell[c]].first_cell);
  };

  // Particle groups: the leaves in Morton order, which is the order of their points, cut every
  // group_size leaves.
  std::vector<std::size_t> leaves;
  for (std::size_t c = 0; c < cells.size(); ++c)
    if (cells[c].is_leaf()) leaves.push_back(c);
  std::sort(leaves.begin(), leaves.end(),
            [&](std::size_t a, std::size_t b) { return cells[a].begin < cells[b].begin; });
  std::vector<std::size_t> group_of_leaf(cells.size());
  for (std::size_t first = 0; first < leaves.size(); first += group_size) {
    const std::size_t last = std::min(leaves.size(), first + group_size);
    for (std::size_t l = first; l < last; ++l) group_of_leaf[leaves[l]] = particle_groups_.size();
    const std::size_t first_point = cells[leaves[first]].begin;
    particle_groups_.push_back({first_point, cells[leaves[last - 1]].end - first_point});
  }
  // A leaf's points: the first relative to its group's first point, and the count.
  auto points_of = [&](std::size_t leaf) {
    const std::size_t first = particle_groups_[group_of_leaf[leaf]].first_point;
    return std::pair{to_int(cells[leaf].begin - first), to_int(cells[leaf].count())};
  };
  auto add_cell_entry = [&](TaskCollector& collector, std::size_t source, std::size_t target,
                            std::size_t cell, std::size_t leaf) {
    const Cell& c = cells[cell];
    const auto [first, count] = points_of(leaf);
    collector.add(source, target,
                  {local_cell(cell), to_int(c.x), to_int(c.y), to_int(c.z), first, count},
                  static_cast<double>(count));
  };

  // Upward: P2M at every leaf, M2M from the deepest level up, then compression.
  TaskCollector p2m(Kernel::p2m);
  for (std::size_t leaf : leaves)
    add_cell_entry(p2m, group_of_leaf[leaf], group_of_cell[leaf], leaf, leaf);
  p2m.move_to(tasks_);
  for (int level = tree.levels() - 1; level > 0; --level) {
    TaskCollector m2m(Kernel::m2m);
    for (std::size_t c = tree.level_begin(level); c < tree.level_begin(level + 1); ++c) {
      const auto parent = static_cast<std::size_t>(cells[c].parent);
      m2m.add(group_of_cell[c], group_of_cell[parent],
              {local_cell(c), local_cell(parent), static_cast<std::int32_t>(cells[c].key & 7)}, 1);
    }
    m2m.move_to(tasks_);
  }
  // Only cells that are M2L sources need a compressed multipole; a group is compressed whole.
  std::vector<bool> compressed(cell_groups_.size(), false);
  for (std::size_t b = 0; b < cells.size(); ++b)
    for (std::int32_t a : lists.v[b]) compressed[group_of_cell[static_cast<std::size_t>(a)]] = true;
  for (std::size_t g = 0; g < cell_groups_.size(); ++g)
    if (compressed[g])
      tasks_.push_back({Kernel::compress, g, g, {}, double(cell_groups_[g].cell_count)});

  // Far field: M2L (V), P2L (X), M2P (W).
  TaskCollector m2l(Kernel::m2l), p2l(Kernel::p2l), m2p(Kernel::m2p);
  std::vector<bool> expanded(cell_groups_.size(), false);
  for (std::size_t b = 0; b < cells.size(); ++b) {
    const Cell& target = cells[b];
    for (std::int32_t index : lists.v[b]) {
      const auto a = static_cast<std::size_t>(index);
      const Cell& source = cells[a];
      const int offset = ((static_cast<int>(source.x) - static_cast<int>(target.x) + 3) * 7 +
                          (static_cast<int>(source.y) - static_cast<int>(target.y) + 3)) *
                             7 +
                         (static_cast<int>(source.z) - static_cast<int>(target.z) + 3);
      m2l.add(group_of_cell[a], group_of_cell[b], {offset, local_cell(b), local_cell(a)}, 1);
      expanded[group_of_cell[b]] = true;
    }
    for (std::int32_t a : lists.x[b])
      add_cell_entry(p2l, group_of_leaf[static_cast<std::size_t>(a)], group_of_cell[b], b,
                     static_cast<std::size_t>(a));
    for (std::int32_t a : lists.w[b])
      add_cell_entry(m2p, group_of_cell[static_cast<std::size_t>(a)], group_of_leaf[b],
                     static_cast<std::size_t>(a), b);
  }
  const std::size_t first_m2l = tasks_.size();
  m2l.move_to(tasks_);
  // Batched by offset inside each task: the kernel runs each offset's pairs as one product.
  for (std::size_t t = first_m2l; t < tasks_.size(); ++t) {
    std::vector<std::int32_t>& work = tasks_[t].work;
    std::vector<std::array<std::int32_t, 3>> entries(work.size() / 3);
    for (std::size_t e = 0; e < entries.size(); ++e)
      entries[e] = {work[3 * e], work[3 * e + 1], work[3 * e + 2]};
    std::sort(entries.begin(), entries.end());
    for (std::size_t e = 0; e < entries.size(); ++e)
      std::copy(entries[e].begin(), entries[e].end(), work.begin() + 3 * e);
  }
  p2l.move_to(tasks_);
  m2p.move_to(tasks_);

  // Near field: each unordered pair of touching leaves once, in the group of the first leaf of
  // the pair (inner) or in the task of the two groups.
  TaskCollector inner(Kernel::p2p_inner), pair(Kernel::p2p_pair);
  for (std::size_t b : leaves) {
    const std::size_t gb = group_of_leaf[b];
    const auto [tb, nb] = points_of(b);
    for (std::int32_t index : lists.u[b]) {
      const auto a = static_cast<std::size_t>(index);
      const std::size_t ga = group_of_leaf[a];
      const auto [ta, na] = points_of(a);
      const double interactions = static_cast<double>(nb) * static_cast<double>(na);
      if (ga == gb && cells[a].begin >= cells[b].begin)
        inner.add(gb, gb, {tb, nb, ta, na}, interactions);
      else if (gb < ga)
        pair.add(gb, ga, {tb, nb, ta, na}, interactions);
    }
  }
  // W cells with few points: the leaf's points and the cell's, which may lie in several
  // particle groups, once per group.
  for (std::size_t b : leaves) {
    const std::size_t gb = group_of_leaf[b];
    const auto [tb, nb] = points_of(b);
    for (std::int32_t index : lists.w_direct[b]) {
      const Cell& a = cells[static_cast<std::size_t>(index)];
      auto group = std::upper_bound(
          particle_groups_.begin(), particle_groups_.end(), a.begin,
          [](std::size_t point, const ParticleGroup& g) { return point < g.first_point; });
      for (--group; group != particle_groups_.end() && group->first_point < a.end; ++group) {
        const std::size_t first = std::max(a.begin, group->first_point);
        const std::size_t last = std::min(a.end, group->first_point + group->point_count);
        const auto ga = static_cast<std::size_t>(group - particle_groups_.begin());
        const std::int32_t ta = to_int(first - group->first_point), na = to_int(last - first);
        const double interactions = static_cast<double>(nb) * static_cast<double>(na);
        if (ga == gb)
          inner.add(gb, gb, {tb, nb, ta, na}, interactions);
        else if (gb < ga)
          pair.add(gb, ga, {tb, nb, ta, na}, interactions);
        else
          pair.add(ga, gb, {ta, na, tb, nb}, interactions);
      }
    }
  }
  const std::size_t first_p2p = tasks_.size();
  inner.move_to(tasks_);
  pair.move_to(tasks_);
  split_near_field(first_p2p);

  // Downward: expansion and L2L from the top down, then L2P at every leaf.
  for (int level = 0; level < tree.levels(); ++level) {
    for (std::size_t g = 0; g < cell_groups_.size(); ++g)
      if (cell_groups_[g].level == level && expanded[g])
        tasks_.push_back({Kernel::expand, g, g, {}, double(cell_groups_[g].cell_count)});
    if (level + 1 == tree.levels()) break;
    TaskCollector l2l(Kernel::l2l);
    for (std::size_t c = tree.level_begin(level + 1); c < tree.level_begin(level + 2); ++c) {
      const auto parent = static_cast<std::size_t>(cells[c].parent);
      l2l.add(group_of_cell[parent], group_of_cell[c],
              {local_cell(parent), local_cell(c), static_cast<std::int32_t>(cells[c].key & 7)}, 1);
    }
    l2l.move_to(tasks_);
  }
  TaskCollector l2p(Kernel::l2p);
  for (std::size_t leaf : leaves)
    add_cell_entry(l2p, group_of_cell[leaf], group_of_leaf[leaf], leaf, leaf);
  l2p.move_to(tasks_);

  // Each work list starts with the level of the cell group whose cells it positions.
  for (GroupTask& task : tasks_) {
    if (stride(task.kernel) == 0) continue;
    int level = 0;
    if (task.kernel == Kernel::p2m || task.kernel == Kernel::p2l)
      level = cell_groups_[task.target].level;
    else if (task.kernel == Kernel::l2p || task.kernel == Kernel::m2p || task.kernel == Kernel::m2l)
      level = cell_groups_[task.source].level;
    task.work.insert(task.work.begin(), level);
  }
}

}  // namespace fmm
