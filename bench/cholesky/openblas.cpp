// The Cholesky benchmark's library baseline: OpenBLAS's LAPACK dpotrf on the whole matrix, which
// is itself a blocked, multithreaded factorisation.
#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>

#include "cholesky/peers.hpp"
#include "common/harness.hpp"

namespace bench {

double cholesky_openblas(double* a, int n) {
  if (n < 0) throw std::invalid_argument("cholesky_openblas: n must be >= 0");
  // hardware_concurrency may report 0 when it cannot tell.
  openblas_set_num_threads(std::max(1, static_cast<int>(std::thread::hardware_concurrency())));

  const auto start = Clock::now();
  const lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, a, std::max(1, n));
  const double seconds = seconds_since(start);

  if (info > 0)
    throw std::runtime_error("cholesky_openblas: matrix is not positive definite (leading minor " +
                             std::to_string(info) + ")");
  if (info < 0)
    throw std::runtime_error("cholesky_openblas: LAPACKE_dpotrf rejected argument " +
                             std::to_string(-info) + (info == -4 ? " (NaN in the matrix)" : ""));
  return seconds;
}

}  // namespace bench
