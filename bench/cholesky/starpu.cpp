// The tiled Cholesky on StarPU: one task per tile kernel (potrf, trsm, syrk, gemm), CPU
// implementations only, each calling sequential OpenBLAS / LAPACKE on tiles registered in place.
//
// Every call is a full starpu_init .. starpu_shutdown cycle so that each measurement starts from a
// fresh runtime with exactly `workers` CPU workers. Registration happens before the clock starts;
// unregistration after it stops, which is safe because with CPU workers only every tile stays in
// main memory, where it was registered, so unregistering copies nothing back.
#include <cblas.h>
#include <lapacke.h>
#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "cholesky/peers.hpp"
#include "common/harness.hpp"
#include "common/starpu_support.hpp"

namespace bench {
namespace {

// ---- Tile kernels

// A tile as StarPU's matrix interface describes it: nx is the contiguous dimension, so in
// column-major terms nx is the number of rows and ny the number of columns.
struct Tile {
  double* data;
  int rows;
  int cols;
  int ld;
};

Tile tile_of(void* buffer) {
  const auto* m = static_cast<const starpu_matrix_interface*>(buffer);
  return {reinterpret_cast<double*>(m->ptr), static_cast<int>(m->nx), static_cast<int>(m->ny),
          static_cast<int>(m->ld)};
}

// The first failed potrf of one factorisation. A task body cannot throw through StarPU, so the
// failure is recorded here and turned into an exception once all tasks have finished. The potrf
// tasks run strictly in order of k (each depends on the previous one through the trsm and syrk in
// between), so the first failure recorded is the one that matters; the tasks downstream of it run
// on garbage, which is harmless.
struct Failure {
  std::mutex mutex;
  int tile = -1;  // k of the failed diagonal tile A(k,k); -1 while none failed
  int info = 0;   // LAPACKE_dpotrf's return value for it

  void record(int k, int code) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (tile < 0) {
      tile = k;
      info = code;
    }
  }
};

// Time spent inside the tile kernels of one factorisation, summed over workers.
struct KernelClock {
  std::atomic<std::int64_t> nanoseconds{0};

  // Runs `kernel` and adds its duration.
  template <class Kernel>
  void time(Kernel kernel) {
    const auto start = std::chrono::steady_clock::now();
    kernel();
    nanoseconds.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count(),
                          std::memory_order_relaxed);
  }
};

// cl_arg of a potrf task: which diagonal tile it factors, where to report a failure, and the
// clock. The other kernels get the clock itself.
struct PotrfArg {
  int k;
  Failure* failure;
  KernelClock* clock;
};

// A(k,k) = L(k,k) with L(k,k) L(k,k)^T = A(k,k).
void potrf_body(void* buffers[], void* cl_arg) {
  const Tile akk = tile_of(buffers[0]);
  const auto* arg = static_cast<const PotrfArg*>(cl_arg);
  lapack_int info = 0;
  arg->clock->time(
      [&] { info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', akk.rows, akk.data, akk.ld); });
  if (info != 0) arg->failure->record(arg->k, static_cast<int>(info));
}

// A(m,k) = A(m,k) L(k,k)^-T.
void trsm_body(void* buffers[], void* cl_arg) {
  const Tile lkk = tile_of(buffers[0]);
  const Tile amk = tile_of(buffers[1]);
  static_cast<KernelClock*>(cl_arg)->time([&] {
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, amk.rows, amk.cols,
                1.0, lkk.data, lkk.ld, amk.data, amk.ld);
  });
}

// A(m,m) -= A(m,k) A(m,k)^T, lower triangle only.
void syrk_body(void* buffers[], void* cl_arg) {
  const Tile amk = tile_of(buffers[0]);
  const Tile amm = tile_of(buffers[1]);
  static_cast<KernelClock*>(cl_arg)->time([&] {
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, amm.rows, amk.cols, -1.0, amk.data, amk.ld,
                1.0, amm.data, amm.ld);
  });
}

// A(m,j) -= A(m,k) A(j,k)^T.
void gemm_body(void* buffers[], void* cl_arg) {
  const Tile amk = tile_of(buffers[0]);
  const Tile ajk = tile_of(buffers[1]);
  const Tile amj = tile_of(buffers[2]);
  static_cast<KernelClock*>(cl_arg)->time([&] {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, amj.rows, amj.cols, amk.cols, -1.0,
                amk.data, amk.ld, ajk.data, ajk.ld, 1.0, amj.data, amj.ld);
  });
}

// ---- Performance models

// History-based models keyed by StarPU's default footprint (the tile shapes), so the edge tiles of
// a size that the tile does not divide get histories of their own. The symbols differ from those
// of the micro-benchmarks, whose tasks of the same names busy-wait instead of computing, because
// both write their histories under the same STARPU_HOME.
//
// StarPU resets a model's private state when it shuts down, so one zero-initialised object per
// model serves every init/shutdown cycle of the process.
struct Models {
  starpu_perfmodel potrf{}, trsm{}, syrk{}, gemm{};

  Models() {
    history(potrf, "versa_bench_cholesky_potrf");
    history(trsm, "versa_bench_cholesky_trsm");
    history(syrk, "versa_bench_cholesky_syrk");
    history(gemm, "versa_bench_cholesky_gemm");
  }

  static void history(starpu_perfmodel& model, const char* symbol) {
    model.type = STARPU_HISTORY_BASED;
    model.symbol = symbol;
  }
};

Models& models() {
  static Models instance;
  return instance;
}

// Whether a StarPU scheduling policy reads codelet performance models: the deque-model family
// (dm, dmda, dmdas, ...) and the HEFT variants. Elsewhere a model would only add timing and
// calibration bookkeeping, so the codelets get none.
bool reads_models(const char* scheduler) {
  return std::strncmp(scheduler, "dm", 2) == 0 || std::strstr(scheduler, "heft") != nullptr;
}

// ---- Runtime session

// One StarPU lifetime holding the lower-triangular tiles of `a` registered in place: starpu_init
// and registration on construction; waiting for stray tasks, unregistration and starpu_shutdown on
// destruction.
class Session {
 public:
  Session(const char* scheduler, int workers, double* a, int n, int tile)
      : tiles_((n + tile - 1) / tile) {
    start_starpu(scheduler, workers);

    Models& pm = models();
    const bool with_models = reads_models(scheduler);
    const auto model = [&](starpu_perfmodel& m) { return with_models ? &m : nullptr; };
    potrf = make_codelet(potrf_body, 1, {STARPU_RW}, model(pm.potrf));
    trsm = make_codelet(trsm_body, 2, {STARPU_R, STARPU_RW}, model(pm.trsm));
    syrk = make_codelet(syrk_body, 2, {STARPU_R, STARPU_RW}, model(pm.syrk));
    gemm = make_codelet(gemm_body, 3, {STARPU_R, STARPU_R, STARPU_RW}, model(pm.gemm));

    // Tile (i, j), i >= j, starts at row i*tile, column j*tile of the column-major matrix.
    handles_.resize(static_cast<size_t>(tiles_) * (tiles_ + 1) / 2);
    const size_t ld = static_cast<size_t>(n);
    for (int j = 0; j < tiles_; ++j) {
      const int cols = std::min(tile, n - j * tile);
      for (int i = j; i < tiles_; ++i) {
        const int rows = std::min(tile, n - i * tile);
        double* origin = a + static_cast<size_t>(i) * tile + static_cast<size_t>(j) * tile * ld;
        starpu_matrix_data_register(&handles_[index(i, j)], STARPU_MAIN_RAM,
                                    reinterpret_cast<uintptr_t>(origin), static_cast<uint32_t>(n),
                                    static_cast<uint32_t>(rows), static_cast<uint32_t>(cols),
                                    sizeof(double));
      }
    }
  }

  ~Session() {
    starpu_task_wait_for_all();  // only matters when submission bailed out with tasks in flight
    for (const auto handle : handles_)
      if (handle != nullptr) starpu_data_unregister(handle);
    starpu_shutdown();
  }

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int tiles() const { return tiles_; }
  starpu_data_handle_t at(int i, int j) const { return handles_[index(i, j)]; }

  starpu_codelet potrf{}, trsm{}, syrk{}, gemm{};

 private:
  static size_t index(int i, int j) { return static_cast<size_t>(i) * (i + 1) / 2 + j; }

  int tiles_;
  std::vector<starpu_data_handle_t> handles_;
};

// A detached task (StarPU's default for starpu_task_create) that destroys itself after running.
void submit(starpu_codelet* cl, int priority, std::initializer_list<starpu_data_handle_t> handles,
            void* cl_arg = nullptr) {
  starpu_task* task = starpu_task_create();
  task->cl = cl;
  task->cl_arg = cl_arg;  // not copied nor freed: it outlives the task
  task->priority = priority;
  int i = 0;
  for (const auto handle : handles) task->handles[i++] = handle;
  check(starpu_task_submit(task), "starpu_task_submit");
}

}  // namespace

bool starpu_available() { return true; }

TiledTiming cholesky_starpu(const char* scheduler, int workers, double* a, int n, int tile) {
  if (scheduler == nullptr) throw std::invalid_argument("cholesky_starpu: no scheduler given");
  if (workers < 1) throw std::invalid_argument("cholesky_starpu: workers must be >= 1");
  if (n < 0) throw std::invalid_argument("cholesky_starpu: n must be >= 0");
  if (tile < 1) throw std::invalid_argument("cholesky_starpu: tile must be >= 1");
  if (n == 0) return {0.0, 0.0};

  openblas_set_num_threads(1);  // the parallelism is StarPU's: one sequential BLAS per worker

  // Declared before the session so that they outlive every task, even when submission fails and
  // the session's destructor has to wait for the tasks already submitted.
  Failure failure;
  KernelClock clock;
  const int nt = (n + tile - 1) / tile;
  std::vector<PotrfArg> potrf_args(static_cast<size_t>(nt));
  for (int k = 0; k < nt; ++k) potrf_args[k] = {k, &failure, &clock};

  Session s(scheduler, workers, a, n, tile);

  // Priorities follow StarPU's examples/cholesky/cholesky_implicit.c. With a policy that accepts
  // any int priority (range [INT_MIN, INT_MAX], as lws, prio and dmdas have in StarPU 1.3), a
  // task's priority decreases with its step k and its distance from the diagonal: potrf 2nt-2k,
  // trsm(m) 2nt-2k-m, syrk(j) 2nt-2k-2j, gemm(m,j) 2nt-2k-m-j, so the tasks that unlock the next
  // panel come first. With a bounded range, the critical path (potrf(k), trsm(k+1,k), syrk(k+1,k))
  // gets the maximum priority and everything else the default. dmda's range is [0, 0]: it ignores
  // priorities, so every task gets 0 there.
  const bool unbound =
      starpu_sched_get_max_priority() == INT_MAX && starpu_sched_get_min_priority() == INT_MIN;
  const int max_prio = starpu_sched_get_max_priority();
  const auto prio = [&](int unbound_value, bool critical) {
    return unbound ? unbound_value : critical ? max_prio : STARPU_DEFAULT_PRIO;
  };

  const auto start = Clock::now();
  for (int k = 0; k < nt; ++k) {
    submit(&s.potrf, prio(2 * nt - 2 * k, true), {s.at(k, k)}, &potrf_args[k]);
    for (int m = k + 1; m < nt; ++m)
      submit(&s.trsm, prio(2 * nt - 2 * k - m, m == k + 1), {s.at(k, k), s.at(m, k)}, &clock);
    for (int j = k + 1; j < nt; ++j) {
      submit(&s.syrk, prio(2 * nt - 2 * k - 2 * j, j == k + 1), {s.at(j, k), s.at(j, j)}, &clock);
      for (int m = j + 1; m < nt; ++m)
        submit(&s.gemm, prio(2 * nt - 2 * k - m - j, false), {s.at(m, k), s.at(j, k), s.at(m, j)},
               &clock);
    }
  }
  check(starpu_task_wait_for_all(), "starpu_task_wait_for_all");
  const double seconds = seconds_since(start);

  if (failure.tile >= 0) {
    const std::string where =
        "tile (" + std::to_string(failure.tile) + "," + std::to_string(failure.tile) + ")";
    if (failure.info > 0)
      throw std::runtime_error(
          "cholesky_starpu: matrix is not positive definite (potrf failed on " + where +
          ", leading minor " + std::to_string(failure.tile * tile + failure.info) + ")");
    throw std::runtime_error("cholesky_starpu: LAPACKE_dpotrf rejected argument " +
                             std::to_string(-failure.info) + " on " + where +
                             (failure.info == -4 ? " (NaN in the tile)" : ""));
  }
  return {seconds, static_cast<double>(clock.nanoseconds.load()) * 1e-9};
}

}  // namespace bench
