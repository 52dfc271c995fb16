// The arrays of one evaluation laid out by groups (group_kernels.hpp says how): the sorted
// points and their results in particle-group blocks, the four expansions cell by cell. A
// runtime registers each group's part of each array as one piece of data.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "group_kernels.hpp"
#include "group_tree.hpp"
#include "octree.hpp"
#include "points.hpp"

namespace fmm {

// `size` doubles, all 0, from calloc: a large block comes zeroed from the system, its pages
// cleared when first touched, where a std::vector would write every element in the constructor.
// The expansions take gigabytes at 10^7 points; their pages are then touched by the tasks, in
// parallel, instead of by one thread before any task starts. Throws std::bad_alloc.
class ZeroedDoubles {
 public:
  explicit ZeroedDoubles(std::size_t size);
  double* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(double* p) const { std::free(p); }
  };
  std::unique_ptr<double[], Free> data_;
};

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
  // The same into `into`, resized to the points where it is not their size: one kept from an
  // earlier evaluation of as many points is written over, not allocated and zeroed again.
  void results_in_input_order(const Octree& tree, Potentials& into) const;

 private:
  const GroupTree& groups_;
  std::size_t nodes_, rank_;
  ZeroedDoubles points_, results_, multipoles_, compressed_multipoles_, compressed_locals_, locals_;
};

// Runs one task's kernel on `data` in the calling thread.
void run_task(const KernelContext& context, const GroupTask& task, GroupData& data);

}  // namespace fmm
