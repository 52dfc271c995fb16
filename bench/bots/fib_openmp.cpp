// fib on OpenMP tasks, as BOTS writes it: two `task`s sharing their results, then `taskwait`.
#include <omp.h>

#include "fib.hpp"

namespace bots {
namespace {

std::int64_t fib_openmp(int n) {
  if (n < 2) return n;
  std::int64_t x = 0;
  std::int64_t y = 0;
#pragma omp task untied default(none) shared(x) firstprivate(n)
  x = fib_openmp(n - 1);
#pragma omp task untied default(none) shared(y) firstprivate(n)
  y = fib_openmp(n - 2);
#pragma omp taskwait
  return x + y;
}

}  // namespace

void Fib::run_openmp(int threads) {
#pragma omp parallel num_threads(threads)
#pragma omp single
  result_ = fib_openmp(n_);
}

}  // namespace bots
