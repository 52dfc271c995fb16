#include "cholesky.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

namespace cholesky {

Placements parse_placements(const std::string& text) {
  Placements placements;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("'" + item + "' is not of the form kernel=where");
    const std::string kernel = item.substr(0, eq), where = item.substr(eq + 1);
    if (std::find_if(std::begin(kernels), std::end(kernels),
                     [&](const char* known) { return kernel == known; }) == std::end(kernels))
      throw std::invalid_argument("unknown kernel '" + kernel +
                                  "' (kernels: potrf, trsm, trtri, trmm, syrk, gemm)");
    if (where == "cpu") {
      placements[kernel] = versa::Placement::cpu_only;
    } else if (where == "gpu") {
      placements[kernel] = versa::Placement::gpu_only;
    } else if (where == "prefer_gpu") {
      placements[kernel] = versa::Placement::prefer_gpu;
    } else if (where == "auto") {
      placements[kernel] = versa::Placement::automatic;
    } else {
      throw std::invalid_argument("unknown placement '" + where + "' for " + kernel +
                                  " (placements: cpu, gpu, prefer_gpu, auto)");
    }
  }
  return placements;
}

Priorities parse_priorities(const std::string& text) {
  if (text == "critical_path") return Priorities::critical_path;
  if (text == "wavefront") return Priorities::wavefront;
  if (text == "panel") return Priorities::panel;
  throw std::invalid_argument("unknown priorities '" + text +
                              "' (priorities: critical_path, wavefront, panel)");
}

std::string priorities_parameter(Priorities scheme) {
  switch (scheme) {
    case Priorities::wavefront:
      return ",priorities=wavefront";
    case Priorities::panel:
      return ",priorities=panel";
    case Priorities::critical_path:
      break;
  }
  return {};
}

PanelSolve parse_panel_solve(const std::string& text) {
  if (text == "trsm") return PanelSolve::trsm;
  if (text == "inverse") return PanelSolve::inverse;
  throw std::invalid_argument("unknown panel solve '" + text + "' (solves: trsm, inverse)");
}

TaskCounts task_counts(std::size_t tiles, PanelSolve solve) {
  TaskCounts counts;
  counts.potrf = tiles;
  counts.syrk = tiles * (tiles - (tiles > 0 ? 1 : 0)) / 2;
  if (solve == PanelSolve::inverse) {
    counts.trtri = tiles - (tiles > 0 ? 1 : 0);
    counts.trmm = counts.syrk;
  } else {
    counts.trsm = counts.syrk;
  }
  for (std::size_t k = 0; k < tiles; ++k) {
    const std::size_t below = tiles - k - 1;
    counts.gemm += below * (below - (below > 0 ? 1 : 0)) / 2;
  }
  return counts;
}

void use_one_blas_thread() { openblas_set_num_threads(1); }

namespace {
void use_every_blas_thread() {
  openblas_set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

// ||A||_F from the lower triangle of the symmetric `a`.
template <class T>
double frobenius_norm(const T* a, std::size_t n) {
  double sum = 0;
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = j; i < n; ++i) {
      const double v = a[i + j * n];
      sum += (i == j ? 1.0 : 2.0) * v * v;
    }
  return std::sqrt(sum);
}
}  // namespace

template <class T>
double scaled_residual(const T* a, const T* factor, std::size_t n) {
  use_every_blas_thread();
  const std::size_t size = n * n;
  std::vector<double> l(size, 0.0), r(a, a + size);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = j; i < n; ++i) l[i + j * n] = factor[i + j * n];
  const int m = static_cast<int>(n);
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, m, m, -1.0, l.data(), m, 1.0, r.data(), m);
  return frobenius_norm(r.data(), n) /
         (frobenius_norm(a, n) * static_cast<double>(n) * std::numeric_limits<T>::epsilon());
}

template double scaled_residual<double>(const double*, const double*, std::size_t);
template double scaled_residual<float>(const float*, const float*, std::size_t);

double scaled_residual_estimate(const double* a, const double* factor, std::size_t n, int vectors) {
  use_every_blas_thread();
  const int m = static_cast<int>(n);
  const double scale =
      frobenius_norm(a, n) * static_cast<double>(n) * std::numeric_limits<double>::epsilon();
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> x(n), lx(n), ax(n);
  double worst = 0;
  for (int v = 0; v < vectors; ++v) {
    for (double& e : x) e = uniform(rng);
    lx = x;  // L (L^T x), in place
    cblas_dtrmv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, m, factor, m, lx.data(), 1);
    cblas_dtrmv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, factor, m, lx.data(), 1);
    cblas_dsymv(CblasColMajor, CblasLower, m, 1.0, a, m, x.data(), 1, 0.0, ax.data(), 1);
    cblas_daxpy(m, -1.0, lx.data(), 1, ax.data(), 1);
    const double residual = cblas_dnrm2(m, ax.data(), 1) / (cblas_dnrm2(m, x.data(), 1) * scale);
    worst = std::max(worst, residual);
  }
  return worst;
}

}  // namespace cholesky
