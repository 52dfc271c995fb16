// The reference's sample trees (its sample_trees.sh) with the figures it publishes for them, and
// two small trees for quick checks. The names are the reference's: T1 to T5, about 4 million
// nodes each.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tree.hpp"

namespace uts {

struct SampleTree {
  const char* name;
  TreeShape shape;
  TreeStats expected;  // node count, leaf count and depth as the reference publishes them
  const char* source;  // where the expected figures come from
};

// T1 (geometric, fixed), T2 (geometric, cyclic), T3 (binomial), T4 (hybrid), T5 (geometric,
// linear), then the small ones: "small-geometric" (the reference's default tree) and
// "small-binomial".
std::span<const SampleTree> sample_trees();

// The sample tree called `name`; throws std::invalid_argument listing the names when there is
// none.
const SampleTree& sample_tree(std::string_view name);

// The names, comma-separated, for help texts.
std::string sample_tree_names();

}  // namespace uts
