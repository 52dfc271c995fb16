// Strassen on oneTBB: a task_group per step above the cut-off, one run() per product, then
// wait() before the step combines them. The arena of `threads` threads counts the calling thread.
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "strassen.hpp"

namespace bots {
namespace {

using cilkstrassen::Product;

void strassen_tbb(const Product& product, std::size_t cutoff) {
  if (product.size <= cutoff) {
    cilkstrassen::multiply_by_quadrants(product, false);
    return;
  }
  const cilkstrassen::Step step(product);
  tbb::task_group group;
  for (const Product& part : step.products())
    group.run([&part, cutoff] { strassen_tbb(part, cutoff); });
  group.wait();
  step.combine();
}

}  // namespace

void Strassen::run_tbb(int threads) {
  tbb::task_arena arena(threads);
  arena.execute([this] { strassen_tbb(whole(), cutoff_); });
}

}  // namespace bots
