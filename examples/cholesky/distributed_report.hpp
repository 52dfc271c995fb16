// What the distributed Cholesky tools print on rank 0 once the factor is known: cholesky_mpi and
// its StarPU-MPI peer (bench/mpi/starpu_mpi.cpp), so that bench/mpi/run.py reads both alike.
#pragma once

#include <cstdio>
#include <string>

#include "cholesky.hpp"
#include "result_line.hpp"

namespace cholesky {

// Prints the "matrix" and "time" lines of a factorisation of order `n` in tiles of `tile` on
// `ranks` ranks ("<ranks> ranks x <per_rank>", e.g. "4 workers"), with `check` the residual of
// `factor` against `original` (gathered on this rank), and the RESULT line of `system` with
// `workers` per rank and `parameters` after them (",devices=..." where ranks have accelerators).
// Returns the exit status: 1 when the check fails.
inline int report_distributed(const std::string& system, long n, long tile, int ranks, int workers,
                              const std::string& per_rank, double seconds, bool check,
                              const double* original, const double* factor,
                              const std::string& parameters = "") {
  const double gflops = static_cast<double>(n) * n * n / 3.0 / seconds * 1e-9;
  std::printf("matrix      %ld x %ld double, tiles of %ld, %d ranks x %s\n", n, n, tile, ranks,
              per_rank.c_str());
  std::printf("time        %.4f s, %.2f GFLOP/s (n^3/3 flops)\n", seconds, gflops);
  int status = 0;
  if (check) {
    const double residual = scaled_residual(original, factor, static_cast<std::size_t>(n));
    const bool pass = residual < 10.0;
    std::printf("residual    %.3g (||A - L L^T||_F / (||A||_F n eps)): %s\n", residual,
                pass ? "PASS" : "FAIL");
    status = pass ? 0 : 1;
  }
  example::print_result("mpi-cholesky", system,
                        "n=" + std::to_string(n) + ",tile=" + std::to_string(tile) +
                            ",ranks=" + std::to_string(ranks) +
                            ",workers=" + std::to_string(workers) + parameters,
                        "gflops", gflops, "GFLOP/s");
  return status;
}

}  // namespace cholesky
