// alignment on oneTBB: one task_group, one run() per pair from the arena's thread, then wait().
// The arena of `threads` threads counts the calling thread.
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "alignment.hpp"

namespace bots {

void Alignment::run_tbb(int threads) {
  tbb::task_arena arena(threads);
  arena.execute([this] {
    tbb::task_group pairs;
    for (int si = 0; si < sequence_count(); ++si)
      for (int sj = si + 1; sj < sequence_count(); ++sj)
        pairs.run([this, si, sj] { align(si, sj); });
    pairs.wait();
  });
}

}  // namespace bots
