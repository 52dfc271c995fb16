// health on oneTBB: above the cut-off a task_group per village, one run() per child village while
// the village treats its own patients, then wait() before it admits. The arena of `threads`
// threads counts the calling thread, which runs the time steps.
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "health.hpp"

namespace bots {
namespace {

void simulate_village_tbb(const HealthParameters& parameters, Village& village) {
  if (!health_children_as_tasks(parameters, village.level)) {
    simulate_village_sequential(parameters, village);
    return;
  }
  tbb::task_group group;
  for (Village& child : village.children)
    group.run([&parameters, &child] { simulate_village_tbb(parameters, child); });
  treat_patients(parameters, village);
  group.wait();
  admit_patients(parameters, village);
}

}  // namespace

void Health::run_tbb(int threads) {
  tbb::task_arena arena(threads);
  arena.execute([this] {
    for (int step = 0; step < input_.parameters.steps; ++step)
      simulate_village_tbb(input_.parameters, world_.root);
  });
}

}  // namespace bots
