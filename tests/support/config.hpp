// Runtime configurations shared by the tests.
#pragma once

#include "versa/config.hpp"

namespace versa::testing {

// `n` CPU workers, unpinned: tests run beside each other and beside other jobs.
inline Config workers(int n) {
  Config config;
  config.cpu_workers = n;
  config.pin_workers = false;
  return config;
}

}  // namespace versa::testing
