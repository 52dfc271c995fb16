// cilksort on oneTBB: a task_group per step, one run() per quarter, pairwise merge or merge half,
// then wait(). The arena of `threads` threads counts the calling thread.
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "sort.hpp"

namespace bots {
namespace {

using cilksort::Element;
using cilksort::Merge;
using cilksort::Quarters;

void cilkmerge_tbb(const Merge& merge) {
  if (cilksort::is_sequential(merge)) {
    cilksort::merge_sequential(merge);
    return;
  }
  const std::array<Merge, 2> halves = cilksort::split(merge);
  tbb::task_group group;
  for (const Merge& half : halves) group.run([&half] { cilkmerge_tbb(half); });
  group.wait();
}

void cilksort_tbb(Element* data, Element* scratch, std::size_t n) {
  if (n < cilksort::quicksort_below) {
    cilksort::quicksort(data, data + n);
    return;
  }
  const Quarters quarters{data, scratch, n};
  tbb::task_group group;
  for (int i = 0; i < 4; ++i)
    group.run([&quarters, i] {
      cilksort_tbb(quarters.data + quarters.begin(i), quarters.scratch + quarters.begin(i),
                   quarters.size(i));
    });
  group.wait();
  const std::array<Merge, 2> pairs = quarters.pair_merges();
  for (const Merge& pair : pairs) group.run([&pair] { cilkmerge_tbb(pair); });
  group.wait();
  cilkmerge_tbb(quarters.final_merge());
}

}  // namespace

void Sort::run_tbb(int threads) {
  tbb::task_arena arena(threads);
  arena.execute([this] { cilksort_tbb(data_.data(), scratch_.data(), data_.size()); });
}

}  // namespace bots
