// The FMM as a list of tasks on groups of cells and groups of particles (the group tree of
// ScalFMM: Agullo, Bramas, Coulaud, Darve, Messner & Takahashi, "Task-based FMM for
// heterogeneous architectures", 2016), independent of any runtime: Versa's task program
// (task_program.hpp), the sequential run (fmm.hpp) and the StarPU peer (bench/) submit the same
// tasks in the same order with the same kernels (group_kernels.hpp).
//
// A cell group is up to `group_size` consecutive cells of one level (Morton order), and owns
// four arrays: the cells' multipoles, compressed multipoles, compressed locals and locals. A
// particle group is up to `group_size` consecutive leaves in Morton order, whose points are one
// contiguous range, and owns two arrays: the points (x, y, z, charge) and the results
// (potential and field). Each task reads and writes whole group arrays, and lists in `work` the
// cells or leaves it touches inside them, so a runtime derives its dependencies from the group
// arrays alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "interaction_lists.hpp"
#include "kernel_steps.hpp"
#include "octree.hpp"

namespace fmm {

// The default group size (cells per cell group, leaves per particle group), the fastest measured
// at 10^5 and 10^6 points on 2 cores (docs/fmm.md).
inline constexpr std::size_t default_group_size = 256;

struct CellGroup {
  int level = 0;
  std::size_t first_cell = 0, cell_count = 0;  // cells [first_cell, first_cell + cell_count)
};

struct ParticleGroup {
  std::size_t first_point = 0, point_count = 0;  // sorted points [first_point, + point_count)
};

// What a task does, with the groups it accesses: c = cell group, p = particle group. "multipole"
// and "local" are the cell group's arrays of those expansions, "compressed" ones likewise;
// "points" and "results" the particle group's arrays.
enum class Kernel {
  p2m,        // source p: points -> target c: multipole (commute)
  m2m,        // source c (children): multipole -> target c (parents): multipole (commute)
  compress,   // c: multipole -> c: compressed multipole (write)
  m2l,        // source c: compressed multipole -> target c: compressed local (commute)
  p2l,        // source p: points -> target c: local (commute)
  m2p,        // source c: multipole, target p: points -> target p: results (add)
  p2p_inner,  // p: points -> p: results (add), the pairs of leaves inside one group
  p2p_pair,   // p and p': points -> both results (add), the pairs of leaves between two groups
  expand,     // c: compressed local -> c: local (commute)
  l2l,        // source c (parents): local -> target c (children): local (commute)
  l2p,        // source c: local, target p: points -> target p: results (add)
};
inline constexpr int kernel_count = 11;

// The name of a kernel as task types and reports give it: "p2m", "m2l", "p2p_pair", ...
const char* to_string(Kernel kernel);

// The pass of the method a kernel belongs to, for reporting time per pass.
enum class Pass { upward, far_field, near_field, downward };
Pass pass_of(Kernel kernel);

// The priority of a kernel's tasks, 0 to 3: the far field is the critical path, so its passes
// go first among ready tasks (upward 3, M2L and downward 2, P2L and M2P 1); the near field (0)
// fills the gaps.
int priority_of(Kernel kernel);

// A task's work list is a header, the level of the cell group whose cells it positions (p2m,
// p2l: the target's; m2l, m2p, l2p: the source's; P2P: the entry count instead; else 0), then
// entries of `stride(kernel)` int32 each. Cell indices are local to
// their group, point offsets relative to their group's first point; (x, y, z) are a cell's
// integer coordinates at its level; `offset` codes (dx + 3) * 49 + (dy + 3) * 7 + (dz + 3) of
// source minus target.
//   p2m, l2p, p2l, m2p: cell, x, y, z, first point, point count
//   m2m: child cell, parent cell, octant     l2l: parent cell, child cell, octant
//   m2l: offset, target cell, source cell (sorted by offset)
//   p2p_inner, p2p_pair: target first point, target count, source first point, source count;
//     each pair once: a leaf with itself (inner only: target == source), two distinct leaves, or
//     a leaf and the part in this group of a W cell with few points (w_direct); both ranges
//     receive the other's field. After the entries, the same interactions by target leaf, for
//     the GPU (one thread block per row, so that no two write one point): the row count R, R
//     rows of (side, first point, count, first source, source end), then the sources, (side,
//     first point, count) each; side 0 is the task's source group (that of the entries' first
//     ranges), 1 its target group (their second ranges; p2p_pair only). A row is a leaf (a W
//     cell's points, a run of whole leaves, are cut into them), and takes its sources in entry
//     order.
//   compress, expand: none (the whole group)
int stride(Kernel kernel);
// The number of entries in a work list of `kernel`.
std::size_t entry_count(Kernel kernel, std::span<const std::int32_t> work);

struct GroupTask {
  Kernel kernel;
  std::size_t source, target;      // group indices (cell or particle groups, as the kernel says)
  std::vector<std::int32_t> work;  // empty for compress and expand
  double interactions = 0;    // a work estimate proportional to its run time, for the cost model
  steps::NearFieldRows rows;  // P2P: the size of the work list's by-target view
};

class GroupTree {
 public:
  // Throws std::invalid_argument when group_size is 0.
  GroupTree(const Octree& tree, const InteractionLists& lists, std::size_t group_size);

  const std::vector<CellGroup>& cell_groups() const { return cell_groups_; }
  const std::vector<ParticleGroup>& particle_groups() const { return particle_groups_; }
  // In an order that respects every dependency when run one after the other, which is also
  // the order to submit them in: P2M, M2M from the deepest level up, compression; M2L, P2L,
  // M2P, P2P; expansion and L2L from the top down, L2P.
  const std::vector<GroupTask>& tasks() const { return tasks_; }
  // Moves every task's work list out (task t's at index t), leaving the tasks' lists empty: a
  // runtime registers them as handles without copying them.
  std::vector<std::vector<std::int32_t>> take_work_lists();

 private:
  // Cuts the P2P tasks from index `first` on (the last ones) into pieces.
  void split_near_field(std::size_t first);

  std::vector<CellGroup> cell_groups_;
  std::vector<ParticleGroup> particle_groups_;
  std::vector<GroupTask> tasks_;
};

}  // namespace fmm
