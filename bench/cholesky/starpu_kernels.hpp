// The tiled Cholesky's StarPU codelet bodies, performance models and task priorities, shared by
// the single-process peer (bench/cholesky/starpu.cpp) and the StarPU-MPI peer (bench/mpi): both
// systems run exactly the same tile kernels (sequential OpenBLAS / LAPACKE on a tile in place;
// on a GPU, the example's cuSOLVER / cuBLAS kernels, examples/cholesky/cuda_kernels.hpp).
#pragma once

#include <starpu.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace bench::starpu_cholesky {

// The first failed potrf, or trtri, of one factorisation. A task body cannot throw through
// StarPU, so the failure is recorded here and turned into an exception once all tasks have
// finished. The tasks on diagonal tiles run strictly in order, potrf(k) before trtri(k) before
// potrf(k+1) (each depends on the one before through the tasks in between), so the first failure
// recorded is the one that matters; the tasks downstream of it run on garbage, which is harmless.
// That is why trtri's failures are recorded too, rather than aborting: a trtri on the garbage
// that a failed potrf left may fail in turn, and must not hide potrf's message.
struct Failure {
  std::mutex mutex;
  const char* kernel = "potrf";  // the kernel that failed: "potrf" or "trtri"
  int tile = -1;                 // k of the failed diagonal tile A(k,k); -1 while none failed
  int info = 0;                  // LAPACKE_dpotrf's (or dtrtri's) return value for it
  std::string message;           // on a GPU, the kernel's error instead (cuSOLVER's info is in it)

  void record(int k, int code, std::string gpu_message = {}, const char* failed_kernel = "potrf");
  // Throws std::runtime_error naming the tile when a potrf or trtri failed; `who` prefixes the
  // message.
  void throw_if_failed(const char* who, int tile_size) const;
};

// Time spent inside the tile kernels of one factorisation, summed over workers, and how many ran.
struct KernelClock {
  std::atomic<std::int64_t> nanoseconds{0};
  std::atomic<std::int64_t> calls{0};

  // Runs `kernel` and adds its duration.
  template <class Kernel>
  void time(Kernel kernel) {
    const auto start = std::chrono::steady_clock::now();
    kernel();
    nanoseconds.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count(),
                          std::memory_order_relaxed);
    calls.fetch_add(1, std::memory_order_relaxed);
  }
};

// cl_arg of a potrf task, and of the trtri task of the same step: which diagonal tile it works
// on, where to report a failure, and the clock. The other kernels get the clock itself. Not
// copied by StarPU: it outlives the task.
struct PotrfArg {
  int k;
  Failure* failure;
  KernelClock* clock;
};

// The codelet bodies; buffers are StarPU matrix interfaces (column-major tiles, nx = rows).
void potrf_body(void* buffers[], void* cl_arg);  // A(k,k) = L(k,k), L L^T = A(k,k); PotrfArg
void trsm_body(void* buffers[], void* cl_arg);   // R A(k,k), RW A(m,k): A(m,k) L(k,k)^-T
void trtri_body(void* buffers[], void* cl_arg);  // R A(k,k), W inverse = L(k,k)^-1; PotrfArg
void trmm_body(void* buffers[], void* cl_arg);   // R inverse, RW A(m,k) = A(m,k) inverse^T
void syrk_body(void* buffers[], void* cl_arg);   // R A(m,k), RW A(m,m) -= A(m,k) A(m,k)^T
void gemm_body(void* buffers[], void* cl_arg);   // R A(m,k), R A(j,k), RW A(m,j) -= ... A(j,k)^T

// History-based models keyed by StarPU's default footprint (the tile shapes), one per kernel,
// under the symbols `<prefix>_potrf` and so on. StarPU resets a model's private state when it
// shuts down, so one zero-initialised object per model serves every init/shutdown cycle.
struct Models {
  explicit Models(const std::string& prefix);
  Models(const Models&) = delete;
  Models& operator=(const Models&) = delete;

  std::string names[6];
  starpu_perfmodel potrf{}, trsm{}, trtri{}, trmm{}, syrk{}, gemm{};
};

// Whether a StarPU scheduling policy reads codelet performance models: the deque-model family
// (dm, dmda, dmdas, ...) and the HEFT variants. Elsewhere a model would only add timing and
// calibration bookkeeping, so the codelets get none.
bool reads_models(const char* scheduler);

// The codelets with `models` when the scheduler reads them: CPU only, or with `cuda` (which
// needs cuda_codelets_built()) also the CUDA bodies, so StarPU picks a CPU or a GPU per task.
// trtri and trmm solve the panels through L(k,k)^-1, in place of trsm.
struct Codelets {
  Codelets(const char* scheduler, Models& models, bool cuda = false);
  starpu_codelet potrf{}, trsm{}, trtri{}, trmm{}, syrk{}, gemm{};
};

// Whether the CUDA bodies exist: StarPU and Versa's example were both built with CUDA
// (starpu_cuda.cpp; starpu_no_cuda.cpp otherwise).
bool cuda_codelets_built();

// Adds to `cl` the same kernels on a StarPU CUDA worker: the example's, queued on the worker's
// stream (starpu_cuda_get_local_stream) with its cuBLAS handle (starpu_cublas_get_local_handle)
// and the cuSOLVER handle and workspace start_cuda_workers gave it. Needs cuda_codelets_built().
void add_cuda_bodies(Codelets& cl);

// Gives every CUDA worker its cuBLAS handle (starpu_cublas_init) and a cuSOLVER handle bound to
// its stream; call after starpu_init. stop_cuda_workers frees them; call before starpu_shutdown.
// Both do nothing where !cuda_codelets_built().
void start_cuda_workers();
void stop_cuda_workers();

// Task priorities after StarPU's examples/cholesky/cholesky_implicit.c with a bounded range, the
// scheme Versa's example uses too (every system gets the same priorities): the critical path
// (potrf(k), trsm(k+1,k), syrk(k+1,k)) gets the policy's maximum priority and every other task
// the default. dmda's range is [0, 0]: it ignores priorities; dmdas sorts each worker's queue by
// them. The example's scheme for unbounded ranges (2nt-2k-m-j for gemm(m,j), and so on), which
// lws and dmdas accept, runs wavefronts across steps whose tiles are cold: on 2 cores at
// n = 4096, tile 128, lws's gemms took 148-166 us with it (docs/performance.md, "Tiled
// Cholesky"). Read after starpu_init.
class Priorities {
 public:
  Priorities() : max_(starpu_sched_get_max_priority()) {}
  int potrf() const { return max_; }
  int trsm(int k, int m) const { return m == k + 1 ? max_ : STARPU_DEFAULT_PRIO; }
  int syrk(int k, int j) const { return j == k + 1 ? max_ : STARPU_DEFAULT_PRIO; }
  int gemm() const { return STARPU_DEFAULT_PRIO; }

 private:
  int max_;
};

}  // namespace bench::starpu_cholesky
