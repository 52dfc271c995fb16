// The sequential search: the baseline every parallel search is measured against and checked with.
#pragma once

#include "tree.hpp"

namespace uts {

// Visits every node of the tree `shape` depth first, with an explicit stack (a binomial tree is
// thousands of levels deep), and returns what it found.
TreeStats search_sequential(const TreeShape& shape);

}  // namespace uts
