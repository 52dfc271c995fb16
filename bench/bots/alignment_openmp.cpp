// alignment on OpenMP tasks, as BOTS writes it: one thread walks the pairs and makes each an
// untied task; the barrier at the end of `single` waits for them.
#include <omp.h>

#include "alignment.hpp"

namespace bots {

void Alignment::run_openmp(int threads) {
  const int n = sequence_count();
#pragma omp parallel num_threads(threads)
#pragma omp single
  for (int si = 0; si < n; ++si)
    for (int sj = si + 1; sj < n; ++sj) {
#pragma omp task untied firstprivate(si, sj)
      align(si, sj);
    }
}

}  // namespace bots
