// The search on Versa: spawn/sync, as examples/uts/versa_search.cpp writes it.
#include "versa/versa.hpp"

#include <string>
#include <utility>

#include "../common/harness.hpp"
#include "systems.hpp"

namespace bench {

namespace {

// `on_demand`: a chunk is released only when the worker has no task queued (the example's
// default); without, at every chunk, as the peers release theirs.
UtsSystem versa_system(std::string name, bool on_demand) {
  UtsSystem system;
  system.name = std::move(name);
  system.search = [on_demand](const uts::TreeShape& shape, int workers,
                              const uts::SearchOptions& options, uts::TreeStats& found) {
    versa::Config config;
    config.cpu_workers = workers;
    config.gpus = 0;
    config.quiet = true;
    versa::Runtime rt{config};
    uts::SearchOptions own = options;
    own.on_demand = on_demand;
    const auto start = Clock::now();
    found = uts::search_versa(rt, shape, own);
    return seconds_since(start);
  };
  return system;
}

}  // namespace

std::vector<UtsSystem> versa_uts() {
  return {versa_system("versa", true), versa_system("versa-steady", false)};
}

}  // namespace bench
