// The search on Versa: spawn/sync, as examples/uts/versa_search.cpp writes it.
#include "versa/versa.hpp"

#include "../common/harness.hpp"
#include "systems.hpp"

namespace bench {

std::vector<UtsSystem> versa_uts() {
  UtsSystem system;
  system.name = "versa";
  system.search = [](const uts::TreeShape& shape, int workers, const uts::SearchOptions& options,
                     uts::TreeStats& found) {
    versa::Config config;
    config.cpu_workers = workers;
    config.gpus = 0;
    config.quiet = true;
    versa::Runtime rt{config};
    const auto start = Clock::now();
    found = uts::search_versa(rt, shape, options);
    return seconds_since(start);
  };
  return {system};
}

}  // namespace bench
