// fib on oneTBB: a task_group per call, one run() per child, then wait(). The arena of `threads`
// threads counts the calling thread.
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "fib.hpp"

namespace bots {
namespace {

std::int64_t fib_tbb(int n) {
  if (n < 2) return n;
  std::int64_t x = 0;
  std::int64_t y = 0;
  tbb::task_group group;
  group.run([&x, n] { x = fib_tbb(n - 1); });
  group.run([&y, n] { y = fib_tbb(n - 2); });
  group.wait();
  return x + y;
}

}  // namespace

void Fib::run_tbb(int threads) {
  tbb::task_arena arena(threads);
  arena.execute([this] { result_ = fib_tbb(n_); });
}

}  // namespace bots
