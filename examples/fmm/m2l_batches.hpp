// M2L on a device as batched matrix products instead of the block kernel: the plan of one M2L
// task, made on the host from its work list, which the task's device bodies receive as a task
// value (versa::value), since the sizes of the products must be known on the host to launch
// them. The entries of a work list come in runs of one offset (sorted by offset); each run is
// one product, or two through a truncated operator (steps::m2l_shape, steps::m2l_operands). On
// a GPU the runs' products are cuBLAS grouped batched GEMMs (cuda::m2l_products), on the
// emulated device OpenBLAS products with the same arguments (emulated::m2l_products). Internal to
// the example; C++17, as the .cu file that includes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernel_steps.hpp"

namespace fmm {

struct M2LBatches {
  // The truncated runs first, then the whole ones, each kind by shape (k, count), so that
  // runs of one shape are consecutive: one group of a grouped batched call.
  std::vector<steps::M2LRun> runs;
  int truncated = 0;            // runs [0, truncated) have a pass 0
  int level = 0;                // of the cells (the work list's header)
  std::size_t entries = 0;      // of the work list
  std::size_t projections = 0;  // values of the scratch Y: k x count per truncated run

  // The plan of an m2l work list of `work_size` values, with `operators` the host copy of
  // CompressedM2L::device_operators (its ranks and where each operator's values start) and r
  // values per compressed expansion.
  static M2LBatches of(const std::int32_t* work, std::size_t work_size, const double* operators,
                       int r);

  // The number of runs in each group of equal shapes among the products of `pass` (0: the
  // truncated runs; 1: all), in run order.
  std::vector<int> group_sizes(int pass) const;
};

}  // namespace fmm
