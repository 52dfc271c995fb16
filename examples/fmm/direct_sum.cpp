#include "direct_sum.hpp"

#include <cmath>

#include "vector_clones.hpp"

namespace fmm {

FMM_VECTOR_CLONES void add_potential_and_field(const double* tx, const double* ty, const double* tz,
                                               std::size_t nt, const double* sx, const double* sy,
                                               const double* sz, const double* weight,
                                               std::size_t ns, double* potential, double* gx,
                                               double* gy, double* gz) {
  for (std::size_t t = 0; t < nt; ++t) {
    const double x = tx[t], y = ty[t], z = tz[t];
    double sum = 0, sum_x = 0, sum_y = 0, sum_z = 0;
    // A zero distance is masked arithmetically (the division runs on 1 and its result is
    // multiplied by 0): GCC if-converts neither a branch around the division nor a select
    // between its result and 0, and would not vectorise the loop.
#pragma omp simd reduction(+ : sum, sum_x, sum_y, sum_z)
    for (std::size_t s = 0; s < ns; ++s) {
      const double dx = x - sx[s], dy = y - sy[s], dz = z - sz[s];
      const double r2 = dx * dx + dy * dy + dz * dz;
      const double mask = r2 > 0 ? 1.0 : 0.0;
      const double inverse_r = mask / std::sqrt(r2 + (1.0 - mask));
      const double q_over_r = weight[s] * inverse_r;
      const double q_over_r3 = q_over_r * inverse_r * inverse_r;
      sum += q_over_r;
      sum_x -= q_over_r3 * dx;
      sum_y -= q_over_r3 * dy;
      sum_z -= q_over_r3 * dz;
    }
    potential[t] += sum;
    gx[t] += sum_x;
    gy[t] += sum_y;
    gz[t] += sum_z;
  }
}

FMM_VECTOR_CLONES void add_potential(const double* tx, const double* ty, const double* tz,
                                     std::size_t nt, const double* sx, const double* sy,
                                     const double* sz, const double* weight, std::size_t ns,
                                     double* potential) {
  for (std::size_t t = 0; t < nt; ++t) {
    const double x = tx[t], y = ty[t], z = tz[t];
    double sum = 0;
#pragma omp simd reduction(+ : sum)
    for (std::size_t s = 0; s < ns; ++s) {
      const double dx = x - sx[s], dy = y - sy[s], dz = z - sz[s];
      const double r2 = dx * dx + dy * dy + dz * dz;
      const double mask = r2 > 0 ? 1.0 : 0.0;  // as in add_potential_and_field
      sum += mask * weight[s] / std::sqrt(r2 + (1.0 - mask));
    }
    potential[t] += sum;
  }
}

void add_direct_interactions(const Points& points, std::size_t target_begin, std::size_t target_end,
                             std::size_t source_begin, std::size_t source_end, Potentials& result) {
  add_potential_and_field(
      points.x.data() + target_begin, points.y.data() + target_begin,
      points.z.data() + target_begin, target_end - target_begin, points.x.data() + source_begin,
      points.y.data() + source_begin, points.z.data() + source_begin,
      points.charge.data() + source_begin, source_end - source_begin,
      result.potential.data() + target_begin, result.field_x.data() + target_begin,
      result.field_y.data() + target_begin, result.field_z.data() + target_begin);
}

Potentials direct_sum(const Points& points) {
  Potentials result(points.size());
  add_direct_interactions(points, 0, points.size(), 0, points.size(), result);
  return result;
}

}  // namespace fmm
