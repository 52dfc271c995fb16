// Built instead of starpu_cuda.cpp when StarPU or Versa lacks CUDA: the codelets stay CPU only.
#include <stdexcept>

#include "cholesky/starpu_kernels.hpp"

namespace bench::starpu_cholesky {

bool cuda_codelets_built() { return false; }

void add_cuda_bodies(Codelets&) {
  throw std::invalid_argument("StarPU Cholesky codelets: this build has no CUDA bodies");
}

void start_cuda_workers() {}
void stop_cuda_workers() {}

}  // namespace bench::starpu_cholesky
