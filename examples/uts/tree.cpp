#include "tree.hpp"

#include <cmath>
#include <sstream>

namespace uts {
namespace {

// The expected number of children of a geometric node at `depth`, b_i in the reference.
double expected_children(const TreeShape& shape, int depth) {
  const double b0 = shape.root_branching;
  const int limit = shape.depth_limit;
  if (depth == 0) return b0;
  switch (shape.geometric) {
    case GeometricShape::expdec:  // expected size polynomial in depth
      return b0 * std::pow(static_cast<double>(depth), -std::log(b0) / std::log(double(limit)));
    case GeometricShape::cyclic:
      if (depth > 5 * limit) return 0.0;
      return std::pow(b0, std::sin(2.0 * 3.141592653589793 * depth / static_cast<double>(limit)));
    case GeometricShape::fixed:
      return depth < limit ? b0 : 0.0;
    case GeometricShape::linear:
      break;
  }
  return b0 * (1.0 - depth / static_cast<double>(limit));
}

// A geometric law with mean b_i, drawn by inverting its cumulative distribution at the node's
// uniform number. With b_i = 0, log(1 - p) is -infinity and the node is a leaf.
int geometric_children(const TreeShape& shape, const Node& node) {
  const double p = 1.0 / (1.0 + expected_children(shape, node.height));
  const double u = rng_to_probability(rng_rand(node.state));
  return static_cast<int>(std::floor(std::log(1.0 - u) / std::log(1.0 - p)));
}

int binomial_children(const TreeShape& shape, const Node& node) {
  const double u = rng_to_probability(rng_rand(node.state));
  return u < shape.binomial_probability ? shape.binomial_children : 0;
}

}  // namespace

const char* to_string(TreeType type) {
  switch (type) {
    case TreeType::binomial:
      return "binomial";
    case TreeType::geometric:
      return "geometric";
    case TreeType::hybrid:
      return "hybrid";
  }
  return "?";
}

const char* to_string(GeometricShape shape) {
  switch (shape) {
    case GeometricShape::linear:
      return "linear";
    case GeometricShape::expdec:
      return "expdec";
    case GeometricShape::cyclic:
      return "cyclic";
    case GeometricShape::fixed:
      return "fixed";
  }
  return "?";
}

std::string reference_options(const TreeShape& shape) {
  std::ostringstream out;
  out << "-t " << static_cast<int>(shape.type);
  if (shape.type != TreeType::binomial)
    out << " -a " << static_cast<int>(shape.geometric) << " -d " << shape.depth_limit;
  out << " -b " << shape.root_branching << " -r " << shape.root_seed;
  if (shape.type != TreeType::geometric)
    out << " -q " << shape.binomial_probability << " -m " << shape.binomial_children;
  return out.str();
}

Node root_node(const TreeShape& shape) { return Node{rng_root(shape.root_seed), 0}; }

int child_count(const TreeShape& shape, const Node& node) {
  int children = 0;
  switch (shape.type) {
    case TreeType::binomial:
      // The root of a binomial tree has b_0 children; below it the law is the same everywhere.
      children = node.height == 0 ? static_cast<int>(std::floor(shape.root_branching))
                                  : binomial_children(shape, node);
      break;
    case TreeType::geometric:
      children = geometric_children(shape, node);
      break;
    case TreeType::hybrid:
      children = node.height < shape.hybrid_shift * shape.depth_limit
                     ? geometric_children(shape, node)
                     : binomial_children(shape, node);
      break;
  }
  if (node.height == 0 && shape.type == TreeType::binomial)
    return std::min(children, static_cast<int>(std::ceil(shape.root_branching)));
  return std::min(children, max_children);
}

}  // namespace uts
