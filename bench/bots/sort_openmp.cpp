// cilksort on OpenMP tasks, as BOTS writes it: untied tasks for the four quarters and the two
// pairwise merges, each group followed by a taskwait, and two tasks per merge split.
#include <omp.h>

#include "sort.hpp"

namespace bots {
namespace {

using cilksort::Element;
using cilksort::Merge;
using cilksort::Quarters;

void cilkmerge_openmp(const Merge& merge) {
  if (cilksort::is_sequential(merge)) {
    cilksort::merge_sequential(merge);
    return;
  }
  const std::array<Merge, 2> halves = cilksort::split(merge);
#pragma omp task untied default(none) shared(halves)
  cilkmerge_openmp(halves[0]);
#pragma omp task untied default(none) shared(halves)
  cilkmerge_openmp(halves[1]);
#pragma omp taskwait
}

void cilksort_openmp(Element* data, Element* scratch, std::size_t n) {
  if (n < cilksort::quicksort_below) {
    cilksort::quicksort(data, data + n);
    return;
  }
  const Quarters quarters{data, scratch, n};
  for (int i = 0; i < 4; ++i) {
#pragma omp task untied default(none) shared(quarters) firstprivate(i)
    cilksort_openmp(quarters.data + quarters.begin(i), quarters.scratch + quarters.begin(i),
                    quarters.size(i));
  }
#pragma omp taskwait
  const std::array<Merge, 2> pairs = quarters.pair_merges();
#pragma omp task untied default(none) shared(pairs)
  cilkmerge_openmp(pairs[0]);
#pragma omp task untied default(none) shared(pairs)
  cilkmerge_openmp(pairs[1]);
#pragma omp taskwait
  cilkmerge_openmp(quarters.final_merge());
}

}  // namespace

void Sort::run_openmp(int threads) {
#pragma omp parallel num_threads(threads)
#pragma omp single
  cilksort_openmp(data_.data(), scratch_.data(), data_.size());
}

}  // namespace bots
