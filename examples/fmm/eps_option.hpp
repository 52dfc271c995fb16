// The check of an --eps option, shared by the fmm tool and the StarPU peer in bench/fmm, so that
// both accept and refuse the same tolerances with the same words.
#pragma once

#include <cstdlib>
#include <string>

namespace fmm {

// A number in [3e-11, 1e-3], the range of order_for_accuracy: "" when `text` is one, else what is
// wrong (an example::ValueCheck). CLI11's range check would print its bounds as 0.000000 and
// 0.001000.
inline std::string check_eps(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return "expects a number, not '" + text + "'";
  // Written so that a NaN is refused.
  if (!(value >= 3e-11 && value <= 1e-3)) return "must be in [3e-11, 1e-3], not " + text;
  return {};
}

}  // namespace fmm
