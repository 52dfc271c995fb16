// The tiled Cholesky benchmark's peers: the same factorisation done by OpenBLAS's own LAPACK
// (one multithreaded dpotrf call) and by StarPU (a tiled task graph over sequential BLAS).
//
// Each function factors in place the lower triangle of the n x n column-major symmetric positive
// definite matrix `a` (leading dimension n) as A = L L^T; the strict upper triangle is left as it
// was. The return value is the wall time in seconds of the factorisation only: set-up such as
// starting StarPU and registering data is excluded; anything StarPU would need to make the result
// valid in `a` is included. Throws std::runtime_error on failure (e.g. `a` not positive definite).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace cholesky {
enum class PanelSolve;  // cholesky.hpp: how each step solves its panel (trsm, or inverse)
}  // namespace cholesky

namespace bench {

// One tiled factorisation: its wall time and the time its workers spent inside tile kernels,
// summed over workers. kernel_seconds / (workers * seconds) is the share of the workers' time the
// schedule kept busy with kernels; gemm_seconds / gemms the mean time of a gemm, which the order
// of the tasks changes through what each finds in cache.
struct TiledTiming {
  double seconds = 0;
  double kernel_seconds = std::numeric_limits<double>::quiet_NaN();
  double gemm_seconds = std::numeric_limits<double>::quiet_NaN();
  std::int64_t gemms = 0;
};

// LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', ...) with OpenBLAS set to one thread per hardware thread
// (std::thread::hardware_concurrency). The thread count is left at that value afterwards.
double cholesky_openblas(double* a, int n);

// Tiled right-looking Cholesky (potrf, trsm, syrk and gemm tasks on tile x tile blocks, smaller at
// the bottom and right edges when tile does not divide n) on a fresh StarPU instance with
// `workers` CPU workers and the scheduling policy `scheduler` ("lws", "dmda", ...). With `solve`
// PanelSolve::inverse, each step's panel goes through L(k,k)^-1 as Versa's example does it: a
// trtri task into a scratch tile that StarPU allocates where it is needed, then one trmm per
// tile, in place of one trsm per tile. OpenBLAS is set to one thread, and left there, so that
// each worker runs sequential BLAS. Performance-model driven policies (dm*, *heft*) calibrate
// across calls: run them at least once before measuring. With `gpu` StarPU also runs one CUDA
// worker per GPU, the kernels have CUDA implementations too (cuSOLVER / cuBLAS, as Versa's), the
// time includes bringing the factor home to `a`, and dm* policies first calibrate their models
// for the tile shapes of (n, tile) and the kernels of `solve` in untimed runs (once per process).
// A `trace_file` receives where and when each task ran (StarpuTaskTrace).
TiledTiming cholesky_starpu(const char* scheduler, int workers, double* a, int n, int tile,
                            cholesky::PanelSolve solve, bool gpu = false,
                            const std::string& trace_file = {});

// Whether this build has StarPU; without it cholesky_starpu throws std::runtime_error.
bool starpu_available();
// Whether cholesky_starpu can run with `gpu`: StarPU and Versa built with CUDA, a GPU present.
bool starpu_gpu_available();

// cusolverDnDpotrf on the whole matrix on GPU 0, including the copies there and back.
double cholesky_cusolver(double* a, int n);
// Whether this build has CUDA and a GPU is present.
bool cusolver_available();

}  // namespace bench
