// The recursive FFT on OpenMP tasks, as BOTS writes it: an untied task for the unshuffle, one per
// sub-transform and one for the twiddle step, each followed by a taskwait; range tasks split in
// halves, two tasks and a taskwait per split.
#include <omp.h>

#include "fft.hpp"

namespace bots {
namespace {

using cilkfft::Step;

template <class Leaf>
void split_openmp(const Leaf& leaf, std::size_t begin, std::size_t end) {
  if (end - begin < cilkfft::leaf_below) {
    leaf(begin, end);
    return;
  }
  const std::size_t middle = begin + (end - begin) / 2;
#pragma omp task untied default(none) shared(leaf) firstprivate(begin, middle)
  split_openmp(leaf, begin, middle);
#pragma omp task untied default(none) shared(leaf) firstprivate(middle, end)
  split_openmp(leaf, middle, end);
#pragma omp taskwait
}

void fft_openmp(const Step& step) {
  if (step.is_base()) {
    cilkfft::base_transform(step);
    return;
  }
  const std::size_t m = step.m();
  const auto unshuffle = [&step](std::size_t b, std::size_t e) { cilkfft::unshuffle(step, b, e); };
#pragma omp task untied default(none) shared(unshuffle) firstprivate(m)
  split_openmp(unshuffle, 0, m);
#pragma omp taskwait
  for (int k = 0; k < step.radix(); ++k) {
#pragma omp task untied default(none) shared(step) firstprivate(k)
    fft_openmp(step.sub(k));
  }
#pragma omp taskwait
  const auto twiddle = [&step](std::size_t b, std::size_t e) { cilkfft::twiddle(step, b, e); };
#pragma omp task untied default(none) shared(twiddle) firstprivate(m)
  split_openmp(twiddle, 0, m);
#pragma omp taskwait
}

}  // namespace

void Fft::run_openmp(int threads) {
  const cilkfft::TwiddleTable table = twiddle_table();
  const auto fill = [&table](std::size_t b, std::size_t e) { cilkfft::fill_twiddles(table, b, e); };
  const std::size_t table_end = n_ / 2 + 1;
  const Step step = top_step();
#pragma omp parallel num_threads(threads)
#pragma omp single
  {
    split_openmp(fill, 0, table_end);
    fft_openmp(step);
  }
}

}  // namespace bots
