// floorplan on oneTBB: a task_group per layout on the first floorplan_cutoff levels, one run()
// per (shape, corner), then wait(); below the cut-off the task searches sequentially. The arena
// of `threads` threads counts the calling thread.
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "floorplan.hpp"

namespace bots {
namespace {

void add_cell_tbb(const FloorplanInput& input, const FloorplanLayout& layout, int cell, int level,
                  MinArea& best) {
  const auto shapes = static_cast<int>(input.cells[static_cast<std::size_t>(cell)].shapes.size());
  CornerList corners;
  tbb::task_group group;
  for (int shape = 0; shape < shapes; ++shape) {
    const int count = corner_candidates(input, layout, cell, shape, corners);
    for (int i = 0; i < count; ++i) {
      group.run([&input, &layout, &best, cell, level, shape,
                 corner = corners[static_cast<std::size_t>(i)]] {
        FloorplanLayout child;
        if (!place_cell(input, layout, cell, shape, corner, child, best)) return;
        const int next = input.cells[static_cast<std::size_t>(cell)].next;
        if (level + 1 < floorplan_cutoff)
          add_cell_tbb(input, child, next, level + 1, best);
        else
          search_floorplan_sequential(input, child, next, best);
      });
    }
  }
  group.wait();
}

}  // namespace

void Floorplan::run_tbb(int threads) {
  tbb::task_arena arena(threads);
  arena.execute([this] {
    const FloorplanLayout empty = empty_floorplan_layout();
    add_cell_tbb(input_, empty, 1, 0, best_);
  });
}

}  // namespace bots
