#include "cholesky.hpp"

#include <sstream>

namespace cholesky {

Placements parse_placements(const std::string& text) {
  Placements placements;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("--place: '" + item + "' is not of the form kernel=where");
    const std::string kernel = item.substr(0, eq), where = item.substr(eq + 1);
    if (kernel != "potrf" && kernel != "trsm" && kernel != "syrk" && kernel != "gemm")
      throw std::invalid_argument("--place: unknown kernel '" + kernel +
                                  "' (kernels: potrf, trsm, syrk, gemm)");
    if (where == "cpu") {
      placements[kernel] = versa::Placement::cpu_only;
    } else if (where == "gpu") {
      placements[kernel] = versa::Placement::gpu_only;
    } else if (where == "prefer_gpu") {
      placements[kernel] = versa::Placement::prefer_gpu;
    } else if (where == "auto") {
      placements[kernel] = versa::Placement::automatic;
    } else {
      throw std::invalid_argument("--place: unknown placement '" + where + "' for " + kernel +
                                  " (placements: cpu, gpu, prefer_gpu, auto)");
    }
  }
  return placements;
}

TaskCounts task_counts(std::size_t tiles) {
  TaskCounts counts;
  counts.potrf = tiles;
  counts.trsm = counts.syrk = tiles * (tiles - (tiles > 0 ? 1 : 0)) / 2;
  for (std::size_t k = 0; k < tiles; ++k) {
    const std::size_t below = tiles - k - 1;
    counts.gemm += below * (below - (below > 0 ? 1 : 0)) / 2;
  }
  return counts;
}

void use_one_blas_thread() { openblas_set_num_threads(1); }

}  // namespace cholesky
