#include "accuracy.hpp"

#include <cmath>
#include <cstdio>

#include "direct_sum.hpp"
#include "parallel_for.hpp"

namespace fmm {

double relative_l2_error(const std::vector<double>& value, const std::vector<double>& reference) {
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    error += (value[i] - reference[i]) * (value[i] - reference[i]);
    norm += reference[i] * reference[i];
  }
  return norm > 0 ? std::sqrt(error / norm) : std::sqrt(error);
}

double field_relative_l2_error(const Potentials& value, const Potentials& reference) {
  double error = 0, norm = 0;
  const std::vector<double> Potentials::*components[3] = {
      &Potentials::field_x, &Potentials::field_y, &Potentials::field_z};
  for (auto component : components)
    for (std::size_t i = 0; i < value.size(); ++i) {
      const double d = (value.*component)[i] - (reference.*component)[i];
      error += d * d;
      norm += (reference.*component)[i] * (reference.*component)[i];
    }
  return norm > 0 ? std::sqrt(error / norm) : std::sqrt(error);
}

Errors errors(const Potentials& value, const Potentials& reference) {
  return {relative_l2_error(value.potential, reference.potential),
          field_relative_l2_error(value, reference), value.size()};
}

bool equals_sequential(const Potentials& result, const Potentials& sequential) {
  const Errors e = errors(result, sequential);
  const bool equal = e.potential <= 1e-12 && e.field <= 1e-12;
  std::printf(
      "check against the sequential evaluation: relative difference %.2e (potential), "
      "%.2e (field): %s\n",
      e.potential, e.field, equal ? "equal up to rounding" : "DIFFERENT");
  return equal;
}

std::vector<std::size_t> sample_targets(std::size_t n, std::size_t samples) {
  if (samples > n) samples = n;
  std::vector<std::size_t> targets(samples);
  // Bin k is [k n / samples, (k + 1) n / samples), at least `width` wide. k n < n^2 fits in 64
  // bits for any N that a direct check can afford.
  const std::size_t width = samples > 0 ? n / samples : 1;
  for (std::size_t k = 0; k < samples; ++k) targets[k] = k * n / samples + k % width;
  return targets;
}

Potentials direct_sum_at(const Points& sources, const Points& targets) {
  Potentials result(targets.size());
  // Each target's sums on its own, on all cores: at 10^7 sources, 1000 targets take one core
  // 30 s. A target's sum runs over the sources in the same order whatever the chunks.
  example::parallel_for(
      targets.size(),
      [&](std::size_t begin, std::size_t end) {
        add_potential_and_field(targets.x.data() + begin, targets.y.data() + begin,
                                targets.z.data() + begin, end - begin, sources.x.data(),
                                sources.y.data(), sources.z.data(), sources.charge.data(),
                                sources.size(), result.potential.data() + begin,
                                result.field_x.data() + begin, result.field_y.data() + begin,
                                result.field_z.data() + begin);
      },
      1);
  return result;
}

Potentials direct_sum_at(const Points& points, const std::vector<std::size_t>& targets) {
  Points at;
  for (std::size_t k : targets) {
    at.x.push_back(points.x[k]);
    at.y.push_back(points.y[k]);
    at.z.push_back(points.z[k]);
  }
  return direct_sum_at(points, at);
}

Potentials at_targets(const Potentials& result, const std::vector<std::size_t>& targets) {
  Potentials value(targets.size());
  for (std::size_t k = 0; k < targets.size(); ++k) {
    value.potential[k] = result.potential[targets[k]];
    value.field_x[k] = result.field_x[targets[k]];
    value.field_y[k] = result.field_y[targets[k]];
    value.field_z[k] = result.field_z[targets[k]];
  }
  return value;
}

Errors sampled_errors(const Points& points, const Potentials& result, std::size_t samples) {
  const std::vector<std::size_t> targets = sample_targets(points.size(), samples);
  return errors(at_targets(result, targets), direct_sum_at(points, targets));
}

Errors sampled_errors(const Points& sources, const Points& targets, const Potentials& result,
                      std::size_t samples) {
  const std::vector<std::size_t> sampled = sample_targets(targets.size(), samples);
  Points at;
  for (std::size_t k : sampled) {
    at.x.push_back(targets.x[k]);
    at.y.push_back(targets.y[k]);
    at.z.push_back(targets.z[k]);
  }
  return errors(at_targets(result, sampled), direct_sum_at(sources, at));
}

}  // namespace fmm
