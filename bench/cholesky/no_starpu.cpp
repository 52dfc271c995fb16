// Built instead of starpu.cpp when StarPU is not installed: no StarPU rows in the tables.
#include <stdexcept>

#include "cholesky/peers.hpp"

namespace bench {

bool starpu_available() { return false; }
bool starpu_gpu_available() { return false; }

TiledTiming cholesky_starpu(const char* /*scheduler*/, int /*workers*/, double* /*a*/, int /*n*/,
                            int /*tile*/, cholesky::PanelSolve /*solve*/, bool /*gpu*/,
                            const std::string& /*trace_file*/) {
  throw std::runtime_error("cholesky_starpu: this build has no StarPU");
}

}  // namespace bench
