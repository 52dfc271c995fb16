// The recursive FFT on oneTBB: a task_group for the unshuffle, the sub-transforms and the twiddle
// step in turn, each awaited before the next; range tasks split in halves, a task_group per
// split. The arena of `threads` threads counts the calling thread.
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "fft.hpp"

namespace bots {
namespace {

using cilkfft::Step;

template <class Leaf>
void split_tbb(const Leaf& leaf, std::size_t begin, std::size_t end) {
  if (end - begin < cilkfft::leaf_below) {
    leaf(begin, end);
    return;
  }
  const std::size_t middle = begin + (end - begin) / 2;
  tbb::task_group group;
  group.run([&leaf, begin, middle] { split_tbb(leaf, begin, middle); });
  group.run([&leaf, middle, end] { split_tbb(leaf, middle, end); });
  group.wait();
}

void fft_tbb(const Step& step) {
  if (step.is_base()) {
    cilkfft::base_transform(step);
    return;
  }
  const std::size_t m = step.m();
  const auto unshuffle = [&step](std::size_t b, std::size_t e) { cilkfft::unshuffle(step, b, e); };
  tbb::task_group group;
  group.run([&unshuffle, m] { split_tbb(unshuffle, 0, m); });
  group.wait();
  for (int k = 0; k < step.radix(); ++k) group.run([&step, k] { fft_tbb(step.sub(k)); });
  group.wait();
  const auto twiddle = [&step](std::size_t b, std::size_t e) { cilkfft::twiddle(step, b, e); };
  group.run([&twiddle, m] { split_tbb(twiddle, 0, m); });
  group.wait();
}

}  // namespace

void Fft::run_tbb(int threads) {
  tbb::task_arena arena(threads);
  arena.execute([this] {
    const cilkfft::TwiddleTable table = twiddle_table();
    split_tbb([&table](std::size_t b, std::size_t e) { cilkfft::fill_twiddles(table, b, e); }, 0,
              n_ / 2 + 1);
    fft_tbb(top_step());
  });
}

}  // namespace bots
