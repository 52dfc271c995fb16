// The sequential search (examples/uts/sequential_search.hpp), the baseline of the speedups.
#include "../common/harness.hpp"
#include "sequential_search.hpp"
#include "systems.hpp"

namespace bench {

std::vector<UtsSystem> sequential_uts() {
  UtsSystem system;
  system.name = "sequential";
  system.search = [](const uts::TreeShape& shape, int, const uts::SearchOptions&,
                     uts::TreeStats& found) {
    const auto start = Clock::now();
    found = uts::search_sequential(shape);
    return seconds_since(start);
  };
  return {system};
}

}  // namespace bench
