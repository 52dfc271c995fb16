// The trees of the Unbalanced Tree Search benchmark: Galton-Watson trees whose nodes draw their
// number of children from their SHA-1 random state (sha1_rng.hpp), so a tree is fixed by a few
// parameters and can be searched in any order by any number of threads. The definitions are the
// reference's (uts.c: uts_numChildren and its geometric and binomial laws), in double precision as
// there, so that the published sample trees come out node for node.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "sha1_rng.hpp"

namespace uts {

// The law of the number of children (the reference's -t).
enum class TreeType { binomial = 0, geometric = 1, hybrid = 2 };

// How a geometric tree's expected branching factor changes with depth (the reference's -a).
enum class GeometricShape { linear = 0, expdec = 1, cyclic = 2, fixed = 3 };

// A tree's parameters, named after the reference's options; the defaults are its defaults.
struct TreeShape {
  TreeType type = TreeType::geometric;                // -t
  double root_branching = 4.0;                        // -b: b_0
  std::int32_t root_seed = 0;                         // -r
  int binomial_children = 4;                          // -m: children of a binomial non-leaf
  double binomial_probability = 15.0 / 64.0;          // -q: chance that a binomial node has them
  int depth_limit = 6;                                // -d: gen_mx
  GeometricShape geometric = GeometricShape::linear;  // -a
  double hybrid_shift = 0.5;  // -f: a hybrid tree is geometric above depth_limit * hybrid_shift
};

// "binomial", "geometric" or "hybrid", and the shape's name.
const char* to_string(TreeType type);
const char* to_string(GeometricShape shape);

// The reference's command line for `shape` ("-t 1 -a 3 -d 10 -b 4 -r 19"), for reports.
std::string reference_options(const TreeShape& shape);

// No node but a binomial root has more children than this (the reference's MAXNUMCHILDREN).
constexpr int max_children = 100;

// A node: its random state and its depth (the root's is 0). 24 bytes, copied freely.
struct Node {
  RngState state;
  std::int32_t height = 0;
};

Node root_node(const TreeShape& shape);

// How many children `node` has in the tree `shape`: 0 for a leaf. Reads the node's random number;
// hashes nothing.
int child_count(const TreeShape& shape, const Node& node);

// Child number `index` of `parent`: one SHA-1.
inline Node child_node(const Node& parent, int index) {
  return Node{rng_child(parent.state, index), parent.height + 1};
}

// What a search finds: the figures the reference prints.
struct TreeStats {
  std::uint64_t nodes = 0;
  std::uint64_t leaves = 0;
  int max_depth = 0;  // the largest height of a node

  // Counts `node`, which has `children` children.
  void count(const Node& node, int children) {
    ++nodes;
    leaves += children == 0;
    max_depth = std::max(max_depth, static_cast<int>(node.height));
  }

  TreeStats& operator+=(const TreeStats& other) {
    nodes += other.nodes;
    leaves += other.leaves;
    max_depth = std::max(max_depth, other.max_depth);
    return *this;
  }

  bool operator==(const TreeStats&) const = default;
};

}  // namespace uts
