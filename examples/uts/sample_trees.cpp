#include "sample_trees.hpp"

#include <array>
#include <stdexcept>

namespace uts {
namespace {

TreeShape geometric(GeometricShape shape, int depth_limit, double root_branching, int seed) {
  TreeShape tree;
  tree.type = TreeType::geometric;
  tree.geometric = shape;
  tree.depth_limit = depth_limit;
  tree.root_branching = root_branching;
  tree.root_seed = seed;
  return tree;
}

TreeShape binomial(double root_branching, double probability, int children, int seed) {
  TreeShape tree;
  tree.type = TreeType::binomial;
  tree.root_branching = root_branching;
  tree.binomial_probability = probability;
  tree.binomial_children = children;
  tree.root_seed = seed;
  return tree;
}

// T4: "-t 2 -a 0 -d 16 -b 6 -r 1 -q 0.234375 -m 4".
TreeShape hybrid_t4() {
  TreeShape tree = geometric(GeometricShape::linear, 16, 6, 1);
  tree.type = TreeType::hybrid;
  tree.binomial_probability = 0.234375;
  tree.binomial_children = 4;
  return tree;
}

constexpr const char* published = "the reference's sample_trees.sh";

const std::array<SampleTree, 7> trees = {{
    {"T1", geometric(GeometricShape::fixed, 10, 4, 19), {4130071, 3305118, 10}, published},
    {"T2", geometric(GeometricShape::cyclic, 16, 6, 502), {4117769, 2342762, 81}, published},
    {"T3", binomial(2000, 0.124875, 8, 42), {4112897, 3599034, 1572}, published},
    {"T4", hybrid_t4(), {4132453, 3108986, 134}, published},
    {"T5", geometric(GeometricShape::linear, 20, 4, 34), {4147582, 2181318, 20}, published},
    // The reference's default parameters; its verification code publishes nodes and leaves.
    {"small-geometric",
     geometric(GeometricShape::linear, 6, 4, 0),
     {1732, 1050, 6},
     "the reference's default tree (nodes and leaves published, depth from this code)"},
    {"small-binomial",
     binomial(2000, 0.122, 8, 42),
     {112169, 98397, 200},
     "this code's sequential search (T3 with q = 0.122: no published figures)"},
}};

}  // namespace

std::span<const SampleTree> sample_trees() { return trees; }

const SampleTree& sample_tree(std::string_view name) {
  for (const SampleTree& tree : trees)
    if (name == tree.name) return tree;
  throw std::invalid_argument("unknown tree '" + std::string(name) + "' (expected one of " +
                              sample_tree_names() + ")");
}

std::string sample_tree_names() {
  std::string names;
  for (const SampleTree& tree : trees)
    names += (names.empty() ? "" : ", ") + std::string(tree.name);
  return names;
}

}  // namespace uts
