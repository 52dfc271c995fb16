// The tiled Cholesky on StarPU: one task per tile kernel (potrf, trsm, syrk, gemm), CPU
// implementations only, each calling sequential OpenBLAS / LAPACKE on tiles registered in place.
//
// Every call is a full starpu_init .. starpu_shutdown cycle so that each measurement starts from a
// fresh runtime with exactly `workers` CPU workers. Registration happens before the clock starts;
// unregistration after it stops, which is safe because with CPU workers only every tile stays in
// main memory, where it was registered, so unregistering copies nothing back.
#include <cblas.h>
#include <starpu.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cholesky/peers.hpp"
#include "cholesky/starpu_kernels.hpp"
#include "common/harness.hpp"
#include "common/starpu_support.hpp"

namespace bench {
namespace {

using starpu_cholesky::Codelets;
using starpu_cholesky::Failure;
using starpu_cholesky::KernelClock;
using starpu_cholesky::Models;
using starpu_cholesky::PotrfArg;
using starpu_cholesky::Priorities;

// The symbols differ from those of the micro-benchmarks, whose tasks of the same names busy-wait
// instead of computing, because both write their histories under the same STARPU_HOME.
Models& models() {
  static Models instance("versa_bench_cholesky");
  return instance;
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
    codelets_.emplace(scheduler, models());

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
  Codelets& codelets() { return *codelets_; }

 private:
  static size_t index(int i, int j) { return static_cast<size_t>(i) * (i + 1) / 2 + j; }

  int tiles_;
  std::optional<Codelets> codelets_;  // made once StarPU has started
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
  KernelClock clock, gemm_clock;  // the gemms apart, for their mean time
  const int nt = (n + tile - 1) / tile;
  std::vector<PotrfArg> potrf_args(static_cast<size_t>(nt));
  for (int k = 0; k < nt; ++k) potrf_args[k] = {k, &failure, &clock};

  Session s(scheduler, workers, a, n, tile);

  // Priorities as StarPU's own Cholesky example gives them with a bounded range (Priorities).
  const Priorities prio;
  Codelets& cl = s.codelets();
  const auto start = Clock::now();
  for (int k = 0; k < nt; ++k) {
    submit(&cl.potrf, prio.potrf(), {s.at(k, k)}, &potrf_args[k]);
    for (int m = k + 1; m < nt; ++m)
      submit(&cl.trsm, prio.trsm(k, m), {s.at(k, k), s.at(m, k)}, &clock);
    for (int j = k + 1; j < nt; ++j) {
      submit(&cl.syrk, prio.syrk(k, j), {s.at(j, k), s.at(j, j)}, &clock);
      for (int m = j + 1; m < nt; ++m)
        submit(&cl.gemm, prio.gemm(), {s.at(m, k), s.at(j, k), s.at(m, j)}, &gemm_clock);
    }
  }
  check(starpu_task_wait_for_all(), "starpu_task_wait_for_all");
  const double seconds = seconds_since(start);

  failure.throw_if_failed("cholesky_starpu", tile);
  const double gemm_seconds = static_cast<double>(gemm_clock.nanoseconds.load()) * 1e-9;
  return {seconds, static_cast<double>(clock.nanoseconds.load()) * 1e-9 + gemm_seconds,
          gemm_seconds, gemm_clock.calls.load()};
}

}  // namespace bench
