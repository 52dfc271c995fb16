// The interaction lists of the adaptive FMM (Carrier, Greengard & Rokhlin 1988, in the form of
// Ying, Biros & Zorin 2004), for a cell B:
//   U (leaves only): the leaves that touch B, B included           -> P2P, exact
//   V: the children of the colleagues of B's parent that do not touch B (same level) -> M2L
//   W (leaves only): the descendants A of B's colleagues that do not touch B while A's parent
//      does; A is smaller than B                                    -> M2P, A's multipole at B's
//      points
//   X: the cells A with B in W(A); A is a leaf larger than B        -> P2L, A's points into B's
//   local
// (A colleague is a cell of the same level that touches B.)
//
// W and X are kept rather than folded into P2P: on clustered points a big leaf next to a deep
// cluster would otherwise interact directly with the whole cluster, which is the O(N^2) the FMM
// is there to avoid. Only their cells with few points (fewer than an expansion's nodes) are
// folded into P2P (w_direct), where the direct sum is the cheaper. M2P and P2L are as accurate as
// M2L here: in each case the cell whose expansion is used is separated from the other by at least
// its own width, the same separation as a V-list pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "octree.hpp"

namespace fmm {

struct InteractionLists {
  // Indexed by cell; each entry lists cell indices. u, w and w_direct are empty for non-leaf
  // cells.
  std::vector<std::vector<std::int32_t>> u, v, w, x;
  // The cells of W(B) with few points, taken out of W and X: their points and B's interact
  // directly (P2P), which is cheaper than M2P at B's points plus P2L into their locals when
  // they hold fewer points than an expansion has nodes.
  std::vector<std::vector<std::int32_t>> w_direct;
};

// The lists of `tree`; the cells of W lists that hold at most `direct_limit` points go to
// w_direct instead (0: none).
InteractionLists build_interaction_lists(const Octree& tree, std::size_t direct_limit = 0);

}  // namespace fmm
