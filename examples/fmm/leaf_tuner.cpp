#include "leaf_tuner.hpp"

#include <cmath>
#include <stdexcept>

namespace fmm {

LeafTuner::LeafTuner(std::size_t initial)
    : current_(initial != 0 ? initial : throw std::invalid_argument("fmm: leaf size is 0")),
      best_(initial) {}

void LeafTuner::record(double seconds) {
  if (first_ || seconds < best_seconds_) {
    best_ = current_;
    best_seconds_ = seconds;
  }
  if (!first_ && seconds > previous_seconds_) {
    // Worse than the step before: turn back, with a smaller step.
    growing_ = !growing_;
    factor_ = std::sqrt(factor_);
  }
  first_ = false;
  previous_seconds_ = seconds;
  if (settled()) {
    current_ = best_;
    return;
  }
  const double next =
      growing_ ? static_cast<double>(current_) * factor_ : static_cast<double>(current_) / factor_;
  current_ = std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(next)));
}

}  // namespace fmm
