// The near field (P2P) on CPUs: the Laplace potential and field that the points of one leaf
// receive from those of another, summed directly, over leaves stored as structures of arrays.
// The kernels are vectorised with Google Highway and dispatched at run time to the widest
// instruction set the CPU has (AVX-512, AVX2, SSE4, ...); each pair of points is taken once and
// updates both points (mutual interactions), and 1/r comes from a single-precision reciprocal
// square root refined to double precision. A point receives, from a source of charge q at
// distance r = |x - y|, potential q / r and field -q (x - y) / r^3; a source at distance 0 (the
// point itself, or one that coincides with it) contributes nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fmm {

// The points of one leaf: count of them from index 0 of each array. Read only.
struct LeafPoints {
  const double* x;
  const double* y;
  const double* z;
  const double* charge;
  std::size_t count;
};

// Where a leaf's points accumulate what they receive: added to, never overwritten.
struct LeafResults {
  double* potential;
  double* gx;
  double* gy;
  double* gz;
};

// Adds to `ra` what the points of `a` receive from those of `b`, and to `rb` what those of `b`
// receive from those of `a`, taking each pair once. The two leaves' points and results must not
// overlap (for a leaf with itself, p2p_self).
void p2p_mutual(const LeafPoints& a, const LeafResults& ra, const LeafPoints& b,
                const LeafResults& rb);

// Adds to `r` what each point of `a` receives from the other points of `a`, each pair once.
void p2p_self(const LeafPoints& a, const LeafResults& r);

// The plain scalar sum, one side at a time: adds to `r` what each point of `targets` receives
// from every point of `sources` (one division and square root per pair). The tests compare the
// vectorised kernels with it.
void p2p_reference(const LeafPoints& targets, const LeafResults& r, const LeafPoints& sources);

// The name of the instruction set the kernels run with on this CPU ("AVX3", "AVX2", ...).
const char* p2p_target_name();

// The instruction sets the kernels are compiled for that this CPU runs, best first, as
// Highway's target bits, and a way to restrict the kernels to one of them (0: back to all),
// for measuring each; not to be called while kernels run.
std::vector<std::int64_t> p2p_supported_targets();
const char* p2p_target_name(std::int64_t target);
void p2p_restrict_to_target(std::int64_t target);

}  // namespace fmm
