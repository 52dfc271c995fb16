// Shared helpers for Versa's benchmarks: timing, busy-waiting, medians and the RESULT lines of
// CONVENTIONS.md (the one function the example tools print theirs with). Header-only so that every
// system's file uses exactly the same clock and spin.
#pragma once

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "result_line.hpp"

namespace bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Spins for `us` microseconds of wall time. Every system's task body calls this, so the work per
// task is identical whichever runtime runs it.
inline void busy_wait_us(double us) {
  if (us <= 0) return;
  const auto end = Clock::now() + std::chrono::nanoseconds(static_cast<long long>(us * 1000.0));
  while (Clock::now() < end) {
  }
}

// Bytes currently allocated from the C heap (small blocks and mapped ones), for the memory per
// pending task of the task-count pattern.
inline double heap_in_use() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<double>(info.uordblks + info.hblkhd);
}

inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Whether `name` is among the names chosen on the command line (e.g. --systems).
inline bool chosen(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// One RESULT line, printed as the example tools print theirs (examples/common/result_line.hpp).
using example::print_result;

}  // namespace bench
