// Strassen on OpenMP tasks, as BOTS writes it (its default version): an untied task per product
// of a step above the cut-off, then a taskwait before the step combines them.
#include <omp.h>

#include "strassen.hpp"

namespace bots {
namespace {

using cilkstrassen::Product;

void strassen_openmp(const Product& product, std::size_t cutoff) {
  if (product.size <= cutoff) {
    cilkstrassen::multiply_by_quadrants(product, false);
    return;
  }
  const cilkstrassen::Step step(product);
  for (const Product& part : step.products()) {
#pragma omp task untied default(none) shared(part) firstprivate(cutoff)
    strassen_openmp(part, cutoff);
  }
#pragma omp taskwait
  step.combine();
}

}  // namespace

void Strassen::run_openmp(int threads) {
  const Product product = whole();
  const std::size_t cutoff = cutoff_;
#pragma omp parallel num_threads(threads)
#pragma omp single
  strassen_openmp(product, cutoff);
}

}  // namespace bots
