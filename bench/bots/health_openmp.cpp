// health on OpenMP tasks, as BOTS writes it with its manual cut-off: above the cut-off an untied
// `task` per child village while the village treats its own patients, then `taskwait` before it
// admits; one task runs the time steps.
#include <omp.h>

#include "health.hpp"

namespace bots {
namespace {

void simulate_village_openmp(const HealthParameters& parameters, Village& village) {
  if (!health_children_as_tasks(parameters, village.level)) {
    simulate_village_sequential(parameters, village);
    return;
  }
  for (Village& child : village.children) {
    Village* subtree = &child;
#pragma omp task untied default(none) shared(parameters) firstprivate(subtree)
    simulate_village_openmp(parameters, *subtree);
  }
  treat_patients(parameters, village);
#pragma omp taskwait
  admit_patients(parameters, village);
}

}  // namespace

void Health::run_openmp(int threads) {
  const HealthParameters& parameters = input_.parameters;
  Village& root = world_.root;
#pragma omp parallel num_threads(threads) default(none) shared(parameters, root)
#pragma omp single
#pragma omp task untied default(none) shared(parameters, root)
  for (int step = 0; step < parameters.steps; ++step) simulate_village_openmp(parameters, root);
}

}  // namespace bots
