#include "interpolation.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernel_steps.hpp"

namespace fmm {

ChebyshevInterpolation::ChebyshevInterpolation(int order)
    : order_(order), node_count_(static_cast<std::size_t>(order * order * order)) {
  if (order < 2 || order > 16)
    throw std::invalid_argument("ChebyshevInterpolation: order " + std::to_string(order) +
                                " is outside [2, 16]");
  const std::size_t p = static_cast<std::size_t>(order);
  nodes_1d_.resize(p);
  for (std::size_t m = 0; m < p; ++m)
    nodes_1d_[m] = std::cos((2.0 * static_cast<double>(m) + 1) * std::numbers::pi / (2.0 * order));
  chebyshev_at_nodes_.resize(p * p);
  for (std::size_t m = 0; m < p; ++m) {
    double previous = 1, current = nodes_1d_[m];
    chebyshev_at_nodes_[m] = 1;
    for (std::size_t k = 1; k < p; ++k) {
      chebyshev_at_nodes_[k * p + m] = current;
      const double next = 2 * nodes_1d_[m] * current - previous;
      previous = current;
      current = next;
    }
  }
  for (int side = 0; side < 2; ++side) {
    child_to_parent_[side].resize(p * p);
    parent_to_child_[side].resize(p * p);
    std::vector<double> s(p);
    for (std::size_t m = 0; m < p; ++m) {
      basis(nodes_1d_[m] / 2 + (side == 0 ? -0.5 : 0.5), s.data());
      for (std::size_t n = 0; n < p; ++n) {
        child_to_parent_[side][n * p + m] = s[n];
        parent_to_child_[side][m * p + n] = s[n];
      }
    }
  }
  m2l_ = std::make_unique<const CompressedM2L>(nodes_1d_, compression_threshold(order));
}

double ChebyshevInterpolation::compression_threshold(int order) {
  if (order > 14) return 0;
  return std::pow(10.0, -std::min(order, 13));
}

void ChebyshevInterpolation::basis(double xi, double* s) const {
  steps::basis(order_, chebyshev_at_nodes_.data(), xi, s);
}

void ChebyshevInterpolation::basis_and_derivative(double xi, double* s, double* ds) const {
  steps::basis_and_derivative(order_, chebyshev_at_nodes_.data(), xi, s, ds);
}

void ChebyshevInterpolation::node_positions(const double center[3], double half_width, double* x,
                                            double* y, double* z) const {
  const std::size_t p = static_cast<std::size_t>(order_);
  for (std::size_t a = 0; a < p; ++a)
    for (std::size_t b = 0; b < p; ++b)
      for (std::size_t c = 0; c < p; ++c) {
        const std::size_t i = (a * p + b) * p + c;
        x[i] = center[0] + half_width * nodes_1d_[a];
        y[i] = center[1] + half_width * nodes_1d_[b];
        z[i] = center[2] + half_width * nodes_1d_[c];
      }
}

void ChebyshevInterpolation::p2m(const double center[3], double half_width, const double* x,
                                 const double* y, const double* z, const double* q, std::size_t n,
                                 double* multipole) const {
  const std::size_t p = static_cast<std::size_t>(order_);
  std::vector<double> sx(p), sy(p), sz(p);
  for (std::size_t i = 0; i < n; ++i) {
    basis((x[i] - center[0]) / half_width, sx.data());
    basis((y[i] - center[1]) / half_width, sy.data());
    basis((z[i] - center[2]) / half_width, sz.data());
    for (std::size_t a = 0; a < p; ++a)
      for (std::size_t b = 0; b < p; ++b) {
        const double weight = q[i] * sx[a] * sy[b];
        double* row = multipole + (a * p + b) * p;
#pragma omp simd
        for (std::size_t c = 0; c < p; ++c) row[c] += weight * sz[c];
      }
  }
}

void ChebyshevInterpolation::apply_tensor(const double* ax, const double* ay, const double* az,
                                          const double* in, double* out) const {
  const std::size_t p = static_cast<std::size_t>(order_);
  std::vector<double> t1(node_count_, 0.0), t2(node_count_, 0.0);
  // t1[j1 j2 i3] = sum_j3 az[i3 j3] in[j1 j2 j3]
  for (std::size_t j12 = 0; j12 < p * p; ++j12)
    for (std::size_t i3 = 0; i3 < p; ++i3) {
      double sum = 0;
#pragma omp simd reduction(+ : sum)
      for (std::size_t j3 = 0; j3 < p; ++j3) sum += az[i3 * p + j3] * in[j12 * p + j3];
      t1[j12 * p + i3] = sum;
    }
  // t2[j1 i2 i3] = sum_j2 ay[i2 j2] t1[j1 j2 i3]
  for (std::size_t j1 = 0; j1 < p; ++j1)
    for (std::size_t i2 = 0; i2 < p; ++i2)
      for (std::size_t j2 = 0; j2 < p; ++j2) {
        const double weight = ay[i2 * p + j2];
        const double* from = &t1[(j1 * p + j2) * p];
        double* to = &t2[(j1 * p + i2) * p];
#pragma omp simd
        for (std::size_t i3 = 0; i3 < p; ++i3) to[i3] += weight * from[i3];
      }
  // out[i1 i2 i3] += sum_j1 ax[i1 j1] t2[j1 i2 i3]
  for (std::size_t i1 = 0; i1 < p; ++i1)
    for (std::size_t j1 = 0; j1 < p; ++j1) {
      const double weight = ax[i1 * p + j1];
      const double* from = &t2[j1 * p * p];
      double* to = out + i1 * p * p;
#pragma omp simd
      for (std::size_t i23 = 0; i23 < p * p; ++i23) to[i23] += weight * from[i23];
    }
}

void ChebyshevInterpolation::m2m(unsigned octant, const double* child, double* parent) const {
  apply_tensor(child_to_parent_[octant >> 2 & 1].data(), child_to_parent_[octant >> 1 & 1].data(),
               child_to_parent_[octant & 1].data(), child, parent);
}

void ChebyshevInterpolation::l2l(unsigned octant, const double* parent, double* child) const {
  apply_tensor(parent_to_child_[octant >> 2 & 1].data(), parent_to_child_[octant >> 1 & 1].data(),
               parent_to_child_[octant & 1].data(), parent, child);
}

std::vector<double> ChebyshevInterpolation::device_tables() const {
  std::vector<double> tables = chebyshev_at_nodes_;
  for (const auto* side : {child_to_parent_, parent_to_child_})
    for (int s = 0; s < 2; ++s) tables.insert(tables.end(), side[s].begin(), side[s].end());
  const std::vector<double>& expansion = m2l_->expansion();
  tables.insert(tables.end(), expansion.begin(), expansion.end());
  return tables;
}

void ChebyshevInterpolation::compress(const double* multipole, double* compressed) const {
  m2l_->compress(multipole, compressed, 1);
}

void ChebyshevInterpolation::expand(const double* compressed, double* local) const {
  m2l_->expand(compressed, local, 1);
}

void ChebyshevInterpolation::compress(const double* multipoles, double* compressed,
                                      std::size_t count) const {
  m2l_->compress(multipoles, compressed, count);
}

void ChebyshevInterpolation::expand(const double* compressed, double* locals,
                                    std::size_t count) const {
  m2l_->expand(compressed, locals, count);
}

void ChebyshevInterpolation::m2l(int dx, int dy, int dz, double width, const double* const* sources,
                                 double* const* targets, std::size_t count) const {
  m2l_->m2l(dx, dy, dz, width, sources, targets, count);
}

void ChebyshevInterpolation::l2p(const double center[3], double half_width, const double* local,
                                 const double* x, const double* y, const double* z, std::size_t n,
                                 double* potential, double* gx, double* gy, double* gz) const {
  const std::size_t p = static_cast<std::size_t>(order_);
  std::vector<double> sx(p), sy(p), sz(p), dsx(p), dsy(p), dsz(p);
  const double inverse_h = 1.0 / half_width;
  for (std::size_t i = 0; i < n; ++i) {
    basis_and_derivative((x[i] - center[0]) * inverse_h, sx.data(), dsx.data());
    basis_and_derivative((y[i] - center[1]) * inverse_h, sy.data(), dsy.data());
    basis_and_derivative((z[i] - center[2]) * inverse_h, sz.data(), dsz.data());
    double value = 0, vx = 0, vy = 0, vz = 0;
    for (std::size_t a = 0; a < p; ++a)
      for (std::size_t b = 0; b < p; ++b) {
        const double* row = local + (a * p + b) * p;
        double row_s = 0, row_ds = 0;
#pragma omp simd reduction(+ : row_s, row_ds)
        for (std::size_t c = 0; c < p; ++c) {
          row_s += row[c] * sz[c];
          row_ds += row[c] * dsz[c];
        }
        value += sx[a] * sy[b] * row_s;
        vx += dsx[a] * sy[b] * row_s;
        vy += sx[a] * dsy[b] * row_s;
        vz += sx[a] * sy[b] * row_ds;
      }
    potential[i] += value;
    gx[i] += vx * inverse_h;
    gy[i] += vy * inverse_h;
    gz[i] += vz * inverse_h;
  }
}

}  // namespace fmm
