// The Barcelona OpenMP Tasks Suite's kernels (BOTS: Duran et al., 2009), each written for every
// system the benchmark compares: sequential C++, Versa, OpenMP tasks and, where natural, oneTBB.
//
// A kernel is a class K (one header per kernel, K.hpp) with:
//   static constexpr const char* name;     "fib", "nqueens", ... (the RESULT lines' kernel=)
//   explicit K(Scale scale);               makes the input (not timed)
//   std::string input() const;             the input in words, for the table ("n=32")
//   void reset();                          restores what a run changes (not timed)
//   void run_sequential();
//   void run_versa(versa::Runtime& rt);    spawn/sync, or submit with handles (sparselu)
//   void run_openmp(int threads);          K_openmp.cpp, in the benchmark only
//   void run_tbb(int threads);             K_tbb.cpp, in the benchmark only; where natural
//   std::string verify() const;            the suite's own check of the last run: empty when
//                                          right, else what is wrong
//   std::uint64_t tasks() const;           tasks a parallel run creates, when the kernel
//                                          measures task overhead (fib, nqueens); else 0
// The sequential, Versa and verification parts form the library versa_bots, which the tests
// use; the peers are built into versa-bench-bots only (bench/CMakeLists.txt).
//
// Every system runs the same kernel code (the leaf computations are shared functions) and cuts
// the work into tasks at the same places, with the same cut-offs: only the task primitives differ.
// The heavy leaf functions are declared [[gnu::noinline, gnu::aligned(64)]]: the Versa versions
// share a file with them and would otherwise inline them into their task bodies, where the
// machine code, and its speed, changed with wherever the linker put the body (sparselu's bmod ran
// at half speed on one worker in one such build: docs/performance.md, "Fine-grained tasks: UTS
// and BOTS").
#pragma once

#include <stdexcept>
#include <string>

namespace bots {

// The benchmark's inputs (the sizes of the anchors, each 1-10 s sequentially on 2 cores)
// or small ones that the tests run in well under a second, also under ThreadSanitizer.
enum class Scale { small, bench };

inline Scale parse_scale(const std::string& text) {
  if (text == "small") return Scale::small;
  if (text == "bench") return Scale::bench;
  throw std::invalid_argument("unknown scale '" + text + "' (expected small or bench)");
}

}  // namespace bots
