// floorplan on OpenMP tasks, as BOTS writes it with its manual cut-off: an untied `task` per
// (shape, corner) on the first floorplan_cutoff levels, each on its own copy of the layout, then
// `taskwait`; below the cut-off the task searches sequentially.
#include <omp.h>

#include "floorplan.hpp"

namespace bots {
namespace {

void add_cell_openmp(const FloorplanInput& input, const FloorplanLayout& layout, int cell,
                     int level, MinArea& best) {
  const auto shapes = static_cast<int>(input.cells[static_cast<std::size_t>(cell)].shapes.size());
  CornerList corners;
  for (int shape = 0; shape < shapes; ++shape) {
    const int count = corner_candidates(input, layout, cell, shape, corners);
    for (int i = 0; i < count; ++i) {
      const Corner corner = corners[static_cast<std::size_t>(i)];
#pragma omp task untied default(none) shared(input, layout, best) \
    firstprivate(cell, level, shape, corner)
      {
        FloorplanLayout child;
        if (place_cell(input, layout, cell, shape, corner, child, best)) {
          const int next = input.cells[static_cast<std::size_t>(cell)].next;
          if (level + 1 < floorplan_cutoff)
            add_cell_openmp(input, child, next, level + 1, best);
          else
            search_floorplan_sequential(input, child, next, best);
        }
      }
    }
  }
#pragma omp taskwait
}

}  // namespace

void Floorplan::run_openmp(int threads) {
  const FloorplanLayout empty = empty_floorplan_layout();
#pragma omp parallel num_threads(threads)
#pragma omp single
  add_cell_openmp(input_, empty, 1, 0, best_);
}

}  // namespace bots
