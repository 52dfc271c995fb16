// What the distributed tests share: the local runtime of each rank.
#pragma once

#include "versa/config.hpp"

namespace versa::testing {

// One unpinned worker per rank (ranks share the machine), no GPU, quiet.
inline Config rank_config() {
  Config config;
  config.cpu_workers = 1;
  config.pin_workers = false;
  config.quiet = true;
  config.gpus = 0;
  return config;
}

}  // namespace versa::testing
