// The machine-readable line of one measurement, as CONVENTIONS.md specifies it:
//   RESULT bench=<name> system=<system> param=<value> metric=<name> value=<number> unit=<unit>
// One function prints it for every tool, the examples' and the benchmarks' (bench/common/
// harness.hpp), so that the scripts that parse these lines (bench/run, bench/*/run.py) read one
// format whichever tool wrote them.
#pragma once

#include <cstdio>
#include <string>

namespace example {

// Prints one RESULT line on stdout. Flushed at once, so that a script reading the tool's output
// through a pipe has every measurement made so far, even when the tool fails later.
inline void print_result(const std::string& bench, const std::string& system,
                         const std::string& param, const std::string& metric, double value,
                         const std::string& unit) {
  std::printf("RESULT bench=%s system=%s param=%s metric=%s value=%.6g unit=%s\n", bench.c_str(),
              system.c_str(), param.c_str(), metric.c_str(), value, unit.c_str());
  std::fflush(stdout);
}

}  // namespace example
