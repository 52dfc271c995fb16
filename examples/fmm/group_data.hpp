// The arrays of one evaluation laid out by groups (group_kernels.hpp says how): the sorted
// points and their results in particle-group blocks, the four expansions cell by cell. A
// runtime registers each group's part of each array as one piece of data.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "group_kernels.hpp"
#include "group_tree.hpp"
#include "octree.hpp"
#include "points.hpp"

namespace fmm {

class GroupData {
 public:
  // Copies the tree's sorted points into their groups' blocks; everything else is zero.
  GroupData(const Octree& tree, const GroupTree& groups, const ChebyshevInterpolation& operators);

  std::span<double> points(std::size_t particle_group);
  std::span<double> results(std::size_t particle_group);
  std::span<double> multipoles(std::size_t cell_group);
  std::span<double> compressed_multipoles(std::size_t cell_group);
  std::span<double> compressed_locals(std::size_t cell_group);
  std::span<double> locals(std::size_t cell_group);

  // The results in the order of the input points (tree.original_index()).
  Potentials results_in_input_order(const Octree& tree) const;

 private:
  const GroupTree& groups_;
  std::size_t nodes_, rank_;
  std::vector<double> points_, results_, multipoles_, compressed_multipoles_, compressed_locals_,
      locals_;
};

// Runs one task's kernel on `data` in the calling thread.
void run_task(const KernelContext& context, const GroupTask& task, GroupData& data);

}  // namespace fmm
