#include "sequential_search.hpp"

#include <vector>

namespace uts {

TreeStats search_sequential(const TreeShape& shape) {
  TreeStats stats;
  std::vector<Node> stack{root_node(shape)};
  while (!stack.empty()) {
    const Node node = stack.back();
    stack.pop_back();
    const int children = child_count(shape, node);
    stats.count(node, children);
    for (int i = 0; i < children; ++i) stack.push_back(child_node(node, i));
  }
  return stats;
}

}  // namespace uts
