#include "group_tree.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "parallel_for.hpp"

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

std::size_t entry_count(Kernel kernel, std::span<const std::int32_t> work) {
  if (work.empty()) return 0;
  if (kernel == Kernel::p2p_inner || kernel == Kernel::p2p_pair)
    return static_cast<std::size_t>(work[0]);
  const int values = stride(kernel);
  return values == 0 ? 0 : (work.size() - 1) / static_cast<std::size_t>(values);
}

namespace {

std::int32_t to_int(std::size_t value) { return static_cast<std::int32_t>(value); }

// Appends the by-target view of a P2P task's entries (group_tree.hpp) and writes their count
// in the header. Its rows are the leaves of the task's groups: `leaf_starts[side]` holds the
// first point of each leaf of that side's group, ascending, then the group's point count. Every
// target range is a leaf or, for a W cell, a run of whole leaves, which is cut into its leaves,
// so that no two rows share a point. Two passes over the interactions: one counts each row's
// sources (and keeps the row of each), one places them, in entry order.
void append_by_target(GroupTask& task, const std::vector<std::int32_t>* leaf_starts[2]) {
  const bool inner = task.kernel == Kernel::p2p_inner;
  const std::size_t entries = (task.work.size() - 1) / 4;
  const std::int32_t* entry_data = task.work.data() + 1;
  // Calls f(target side, first, count, source side, first, count) for each direction of each
  // entry: a leaf with itself once.
  auto each_interaction = [&](auto&& f) {
    for (std::size_t e = 0; e < entries; ++e) {
      const std::int32_t* entry = entry_data + 4 * e;
      const std::int32_t side_b = inner ? 0 : 1;
      f(0, entry[0], entry[1], side_b, entry[2], entry[3]);
      if (!(inner && entry[0] == entry[2])) f(side_b, entry[2], entry[3], 0, entry[0], entry[1]);
    }
  };
  // The first row (leaf) of each interaction's target range; each row's first source.
  std::vector<std::int32_t> first_row;
  first_row.reserve(2 * entries);
  std::vector<std::int32_t> first_source[2];
  for (int side = 0; side < 2; ++side) first_source[side].assign(leaf_starts[side]->size(), 0);
  each_interaction([&](std::int32_t side, std::int32_t first, std::int32_t count, std::int32_t,
                       std::int32_t, std::int32_t) {
    const std::vector<std::int32_t>& starts = *leaf_starts[side];
    auto row = static_cast<std::size_t>(std::lower_bound(starts.begin(), starts.end(), first) -
                                        starts.begin());
    first_row.push_back(to_int(row));
    for (; starts[row] < first + count; ++row) ++first_source[side][row];
  });
  std::int32_t total = 0;
  for (std::vector<std::int32_t>& rows : first_source)
    for (std::int32_t& slot : rows) total += std::exchange(slot, total);
  std::vector<std::int32_t> next[2] = {first_source[0], first_source[1]};
  std::vector<std::int32_t> flat(3 * static_cast<std::size_t>(total));
  std::size_t i = 0;
  each_interaction([&](std::int32_t side, std::int32_t first, std::int32_t count,
                       std::int32_t source_side, std::int32_t source_first,
                       std::int32_t source_count) {
    const std::vector<std::int32_t>& starts = *leaf_starts[side];
    for (auto row = static_cast<std::size_t>(first_row[i++]); starts[row] < first + count; ++row) {
      std::int32_t* slot = flat.data() + 3 * static_cast<std::size_t>(next[side][row]++);
      slot[0] = source_side, slot[1] = source_first, slot[2] = source_count;
    }
  });
  std::vector<std::int32_t> rows;
  task.rows = {};
  for (std::int32_t side = 0; side < 2; ++side) {
    const std::vector<std::int32_t>& starts = *leaf_starts[side];
    for (std::size_t r = 0; r + 1 < starts.size(); ++r) {
      if (next[side][r] == first_source[side][r]) continue;  // not a target here
      rows.insert(rows.end(), {side, starts[r], starts[r + 1] - starts[r], first_source[side][r],
                               next[side][r]});
      ++task.rows.rows;
      task.rows.points += starts[r + 1] - starts[r];
    }
  }
  task.work[0] = to_int(entries);
  task.work.push_back(task.rows.rows);
  task.work.insert(task.work.end(), rows.begin(), rows.end());
  task.work.insert(task.work.end(), flat.begin(), flat.end());
}

// Builds the tasks of one kernel: entries are appended per (source group, target group), and
// the tasks come out in the order of those keys, each with its entries in the order they were
// added. Each work list starts with a header slot, where GroupTree's last step writes a level.
class TaskCollector {
 public:
  explicit TaskCollector(Kernel kernel) : kernel_(kernel) {}

  void add(std::size_t source, std::size_t target, std::initializer_list<std::int32_t> entry,
           double interactions) {
    GroupTask& task = task_of(source, target);
    task.work.insert(task.work.end(), entry);
    task.interactions += interactions;
  }

  // Adds the entries of `other`'s tasks after those of this one's, task by task; empties it.
  void take(TaskCollector& other) {
    for (GroupTask& task : other.tasks_) {
      GroupTask& mine = task_of(task.source, task.target);
      if (mine.work.size() == 1) {  // only the header: a new task
        mine = std::move(task);
        continue;
      }
      mine.work.insert(mine.work.end(), task.work.begin() + 1, task.work.end());
      mine.interactions += task.interactions;
    }
    other.tasks_.clear(), other.by_source_.clear();
    other.last_ = no_task;
  }

  void move_to(std::vector<GroupTask>& out) {
    for (std::vector<std::pair<std::size_t, std::size_t>>& targets : by_source_) {
      std::sort(targets.begin(), targets.end());
      for (const auto& [target, index] : targets) out.push_back(std::move(tasks_[index]));
    }
    tasks_.clear(), by_source_.clear();
    last_ = no_task;
  }

 private:
  static constexpr std::size_t no_task = ~std::size_t{0};

  // The task of (source, target), created when new. Consecutive entries mostly go to the same
  // task, and a source group sends to few target groups (its neighbours): a check of the last
  // task and a scan of the source's few targets find it in constant time, where a map of
  // (source, target) took a tree search per entry.
  GroupTask& task_of(std::size_t source, std::size_t target) {
    if (last_ != no_task && tasks_[last_].source == source && tasks_[last_].target == target)
      return tasks_[last_];
    if (source >= by_source_.size()) by_source_.resize(source + 1);
    std::vector<std::pair<std::size_t, std::size_t>>& targets = by_source_[source];
    const auto found = std::find_if(targets.begin(), targets.end(),
                                    [&](const auto& known) { return known.first == target; });
    if (found != targets.end()) {
      last_ = found->second;
    } else {
      last_ = tasks_.size();
      targets.emplace_back(target, last_);
      tasks_.push_back({kernel_, source, target, {0}, 0, {}});
    }
    return tasks_[last_];
  }

  Kernel kernel_;
  std::vector<GroupTask> tasks_;  // in the order of creation
  // by_source_[s]: (target group, index in tasks_) of each task from source group s.
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> by_source_;
  std::size_t last_ = no_task;  // the task of the last entry
};

// The offset code of a source cell relative to a target cell of the same level (stride()).
std::int32_t offset_code(const Cell& source, const Cell& target) {
  const auto delta = [](std::uint32_t from, std::uint32_t to) {
    return static_cast<std::int32_t>(to) - static_cast<std::int32_t>(from) + 3;
  };
  return (delta(target.x, source.x) * 7 + delta(target.y, source.y)) * 7 +
         delta(target.z, source.z);
}

// The M2L tasks into one target group (the V lists of its cells), each work list sorted by
// offset, then target cell, then source cell: the order in which the kernels batch each
// offset's pairs into one product. A target has at most one source per offset, so that order is
// the loop's over target cells with each entry at its offset's place. One pass over the lists
// finds each entry's task and offset and counts them, a second writes every entry at its final
// place, so that each work list is allocated once at its size (the lists of all M2L tasks are
// most of a tree's memory: 0.6 GB at 10^7 points).
class M2LTaskBuilder {
 public:
  M2LTaskBuilder(const Octree& tree, const InteractionLists& lists,
                 const std::vector<CellGroup>& groups,
                 const std::vector<std::size_t>& group_of_cell)
      : cells_(tree.cells()), lists_(lists), groups_(groups), group_of_cell_(group_of_cell) {}

  // Appends the tasks into `target` to `out`, in the order their sources are first met.
  void add_tasks_into(std::size_t target, std::vector<GroupTask>& out) {
    sources_.clear(), next_entry_.clear(), entries_.clear();
    const CellGroup& group = groups_[target];
    std::size_t task = 0;
    for (std::size_t b = group.first_cell; b < group.first_cell + group.cell_count; ++b)
      for (const std::int32_t index : lists_.v[b]) {
        const auto a = static_cast<std::size_t>(index);
        const std::size_t source = group_of_cell_[a];
        // A cell's sources lie mostly in one group after another: check the last one first.
        if (task >= sources_.size() || sources_[task] != source) task = task_of(source);
        const std::int32_t offset = offset_code(cells_[a], cells_[b]);
        const std::size_t slot = task * offsets + static_cast<std::size_t>(offset);
        ++next_entry_[slot];
        entries_.push_back(
            {slot, {offset, to_int(b - group.first_cell), to_int(a - groups_[source].first_cell)}});
      }
    const std::size_t first_task = out.size();
    for (task = 0; task < sources_.size(); ++task) {
      std::size_t count = 0;
      for (std::size_t o = task * offsets; o < (task + 1) * offsets; ++o)
        count += std::exchange(next_entry_[o], count);
      out.push_back({Kernel::m2l,
                     sources_[task],
                     target,
                     std::vector<std::int32_t>(1 + entry_size * count, 0),
                     static_cast<double>(count),
                     {}});
    }
    for (const Entry& entry : entries_) {
      const std::size_t place = next_entry_[entry.slot]++;
      std::copy(entry.values.begin(), entry.values.end(),
                out[first_task + entry.slot / offsets].work.begin() +
                    static_cast<std::ptrdiff_t>(1 + entry_size * place));
    }
  }

 private:
  static constexpr std::size_t offsets = 7 * 7 * 7, entry_size = 3;

  struct Entry {
    std::size_t slot;  // task * offsets + offset
    std::array<std::int32_t, entry_size> values;
  };

  std::size_t task_of(std::size_t source) {
    const auto found = std::find(sources_.begin(), sources_.end(), source);
    if (found != sources_.end()) return static_cast<std::size_t>(found - sources_.begin());
    sources_.push_back(source);
    next_entry_.resize(next_entry_.size() + offsets, 0);
    return sources_.size() - 1;
  }

  const std::vector<Cell>& cells_;
  const InteractionLists& lists_;
  const std::vector<CellGroup>& groups_;
  const std::vector<std::size_t>& group_of_cell_;
  std::vector<std::size_t> sources_;     // the source group of each task
  std::vector<std::size_t> next_entry_;  // per task and offset: a count, then the next place
  std::vector<Entry> entries_;           // the target group's, in the order of the lists
};

// The M2L tasks in the order of (source group, target group), built in parallel over the
// target groups.
std::vector<GroupTask> m2l_tasks(const Octree& tree, const InteractionLists& lists,
                                 const std::vector<CellGroup>& groups,
                                 const std::vector<std::size_t>& group_of_cell) {
  const std::size_t chunks = example::parallel_chunk_count(groups.size(), 1);
  std::vector<std::vector<GroupTask>> found(chunks);
  example::parallel_chunks(groups.size(), chunks,
                           [&](std::size_t chunk, std::size_t begin, std::size_t end) {
                             M2LTaskBuilder builder(tree, lists, groups, group_of_cell);
                             for (std::size_t target = begin; target < end; ++target)
                               builder.add_tasks_into(target, found[chunk]);
                           });
  std::vector<GroupTask> tasks;
  for (std::vector<GroupTask>& part : found)
    std::move(part.begin(), part.end(), std::back_inserter(tasks));
  std::sort(tasks.begin(), tasks.end(), [](const GroupTask& x, const GroupTask& y) {
    return std::pair{x.source, x.target} < std::pair{y.source, y.target};
  });
  return tasks;
}

}  // namespace

void GroupTree::split_near_field(std::size_t first) {
  // The near field is most of the work and has no dependencies between its tasks: cut in
  // pieces of at most 1/64 of it (and at least 10^5 pairs, about 0.3 ms), its tasks spread over
  // workers and devices. A piece is a run of whole entries, as only results are written, with
  // `add`.
  double total = 0;
  for (std::size_t t = first; t < tasks_.size(); ++t) total += tasks_[t].interactions;
  const double piece = std::max(total / 64, 1e5);
  std::vector<std::vector<GroupTask>> pieces(tasks_.size() - first);
  example::parallel_for(
      pieces.size(),
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t p = begin; p < end; ++p) {
          const GroupTask& task = tasks_[first + p];
          const auto stride = static_cast<std::size_t>(fmm::stride(task.kernel));
          GroupTask current{task.kernel, task.source, task.target, {0}, 0, {}};
          for (std::size_t e = 0; e < (task.work.size() - 1) / stride; ++e) {
            const std::int32_t* entry = task.work.data() + 1 + e * stride;
            current.work.insert(current.work.end(), entry, entry + stride);
            current.interactions += static_cast<double>(entry[1]) * static_cast<double>(entry[3]);
            if (current.interactions >= piece) {
              pieces[p].push_back(std::move(current));
              current = {task.kernel, task.source, task.target, {0}, 0, {}};
            }
          }
          if (current.work.size() > 1) pieces[p].push_back(std::move(current));
        }
      },
      16);
  tasks_.resize(first);
  for (std::vector<GroupTask>& of_task : pieces)
    std::move(of_task.begin(), of_task.end(), std::back_inserter(tasks_));
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
  // Far field: M2L (V), P2L (X), M2P (W). Only the groups that are M2L sources need their
  // multipoles compressed, and only the M2L targets have compressed locals to expand.
  std::vector<GroupTask> m2l = m2l_tasks(tree, lists, cell_groups_, group_of_cell);
  std::vector<bool> compressed(cell_groups_.size(), false), expanded(cell_groups_.size(), false);
  for (const GroupTask& task : m2l) compressed[task.source] = true, expanded[task.target] = true;
  for (std::size_t g = 0; g < cell_groups_.size(); ++g)
    if (compressed[g])
      tasks_.push_back({Kernel::compress, g, g, {}, double(cell_groups_[g].cell_count), {}});
  std::move(m2l.begin(), m2l.end(), std::back_inserter(tasks_));
  TaskCollector p2l(Kernel::p2l), m2p(Kernel::m2p);
  for (std::size_t b = 0; b < cells.size(); ++b) {
    for (std::int32_t a : lists.x[b])
      add_cell_entry(p2l, group_of_leaf[static_cast<std::size_t>(a)], group_of_cell[b], b,
                     static_cast<std::size_t>(a));
    for (std::int32_t a : lists.w[b])
      add_cell_entry(m2p, group_of_cell[static_cast<std::size_t>(a)], group_of_leaf[b],
                     static_cast<std::size_t>(a), b);
  }
  p2l.move_to(tasks_);
  m2p.move_to(tasks_);

  // Near field: each unordered pair of touching leaves once, in the group of the first leaf of
  // the pair (inner) or in the task of the two groups. Every such task's source group is that
  // of the leaf whose list has the pair, so chunks of whole particle groups collect them in
  // parallel, and each task's entries come from one chunk in the order of one loop.
  TaskCollector inner(Kernel::p2p_inner), pair(Kernel::p2p_pair);
  {
    const std::size_t chunks = example::parallel_chunk_count(particle_groups_.size(), 1);
    std::vector<TaskCollector> inner_parts(chunks, inner), pair_parts(chunks, pair);
    example::parallel_chunks(particle_groups_.size(), chunks,
                             [&](std::size_t chunk, std::size_t begin, std::size_t end) {
                               for (std::size_t l = begin * group_size;
                                    l < std::min(leaves.size(), end * group_size); ++l) {
                                 const std::size_t b = leaves[l], gb = group_of_leaf[b];
                                 const auto [tb, nb] = points_of(b);
                                 for (std::int32_t index : lists.u[b]) {
                                   const auto a = static_cast<std::size_t>(index);
                                   const std::size_t ga = group_of_leaf[a];
                                   const auto [ta, na] = points_of(a);
                                   const double interactions =
                                       static_cast<double>(nb) * static_cast<double>(na);
                                   if (ga == gb && cells[a].begin >= cells[b].begin)
                                     inner_parts[chunk].add(gb, gb, {tb, nb, ta, na}, interactions);
                                   else if (gb < ga)
                                     pair_parts[chunk].add(gb, ga, {tb, nb, ta, na}, interactions);
                                 }
                               }
                             });
    for (std::size_t chunk = 0; chunk < chunks; ++chunk)
      inner.take(inner_parts[chunk]), pair.take(pair_parts[chunk]);
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
  // The by-target views, whose rows are the leaves: each particle group's leaf starts.
  std::vector<std::vector<std::int32_t>> leaf_starts(particle_groups_.size());
  for (std::size_t leaf : leaves) leaf_starts[group_of_leaf[leaf]].push_back(points_of(leaf).first);
  for (std::size_t g = 0; g < particle_groups_.size(); ++g)
    leaf_starts[g].push_back(to_int(particle_groups_[g].point_count));
  example::parallel_for(
      tasks_.size() - first_p2p,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t t = first_p2p + begin; t < first_p2p + end; ++t) {
          const std::vector<std::int32_t>* starts[2] = {&leaf_starts[tasks_[t].source],
                                                        &leaf_starts[tasks_[t].target]};
          append_by_target(tasks_[t], starts);
        }
      },
      1);

  // Downward: expansion and L2L from the top down, then L2P at every leaf.
  for (int level = 0; level < tree.levels(); ++level) {
    for (std::size_t g = 0; g < cell_groups_.size(); ++g)
      if (cell_groups_[g].level == level && expanded[g])
        tasks_.push_back({Kernel::expand, g, g, {}, double(cell_groups_[g].cell_count), {}});
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

  // Each work list's header is the level of the cell group whose cells it positions (a P2P
  // list's is its entry count, written with its by-target view).
  for (GroupTask& task : tasks_) {
    if (stride(task.kernel) == 0 || task.kernel == Kernel::p2p_inner ||
        task.kernel == Kernel::p2p_pair)
      continue;
    int level = 0;
    if (task.kernel == Kernel::p2m || task.kernel == Kernel::p2l)
      level = cell_groups_[task.target].level;
    else if (task.kernel == Kernel::l2p || task.kernel == Kernel::m2p || task.kernel == Kernel::m2l)
      level = cell_groups_[task.source].level;
    task.work[0] = level;
  }
}

std::vector<std::vector<std::int32_t>> GroupTree::take_work_lists() {
  std::vector<std::vector<std::int32_t>> lists;
  lists.reserve(tasks_.size());
  for (GroupTask& task : tasks_) lists.push_back(std::move(task.work));
  return lists;
}

}  // namespace fmm
