// The tiled Cholesky on StarPU: one task per tile kernel (potrf, trsm, syrk, gemm; trtri and trmm
// in place of trsm when the panels are solved through L(k,k)^-1), each calling sequential
// OpenBLAS / LAPACKE on tiles registered in place, and with `gpu` also cuSOLVER / cuBLAS on
// StarPU's CUDA workers (starpu_cuda.cpp).
//
// Every call is a full starpu_init .. starpu_shutdown cycle so that each measurement starts from a
// fresh runtime with exactly `workers` CPU workers (and the GPUs). Registration happens before the
// clock starts; unregistration after it stops, which is safe because by then every tile's valid
// copy is in main memory, where it was registered: with CPU workers only it never left, and with
// GPUs the timed part ends by fetching every tile home, so unregistering copies nothing back.
#include <cblas.h>
#include <starpu.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "cholesky.hpp"
#include "cholesky/peers.hpp"
#include "cholesky/starpu_kernels.hpp"
#include "common/harness.hpp"
#include "common/starpu_support.hpp"
#include "common/starpu_task_trace.hpp"

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
// destruction. With `gpu`, StarPU also runs one CUDA worker per GPU, and `a` is pinned for as long
// as the session lasts, as cuSOLVER's peer pins it (copies from pageable memory are slower).
class Session {
 public:
  Session(const char* scheduler, int workers, double* a, int n, int tile, bool gpu)
      : tiles_((n + tile - 1) / tile), tile_(tile), gpu_(gpu) {
    if (gpu) {
      starpu_conf conf = cpu_cuda_conf(scheduler, workers);
      check(starpu_init(&conf), "starpu_init");
      if (starpu_cuda_worker_get_count() == 0) {
        starpu_shutdown();
        throw std::runtime_error("cholesky_starpu: StarPU found no GPU");
      }
      starpu_cholesky::start_cuda_workers();
      pinned_ = a;
      pinned_bytes_ = static_cast<size_t>(n) * static_cast<size_t>(n) * sizeof(double);
      check(starpu_memory_pin(pinned_, pinned_bytes_), "starpu_memory_pin");
    } else {
      start_starpu(scheduler, workers);
    }
    codelets_.emplace(scheduler, models(), gpu);

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
    if (gpu_) {
      starpu_memory_unpin(pinned_, pinned_bytes_);
      starpu_cholesky::stop_cuda_workers();
    }
    starpu_shutdown();
  }

  // Brings every tile's valid copy home to main memory: all the copies are requested at once,
  // then waited for one by one.
  void fetch_home() {
    for (const auto handle : handles_)
      check(starpu_data_fetch_on_node(handle, STARPU_MAIN_RAM, 1), "starpu_data_fetch_on_node");
    for (const auto handle : handles_) {
      check(starpu_data_acquire(handle, STARPU_R), "starpu_data_acquire");
      starpu_data_release(handle);
    }
  }

  // Makes main memory's copy of every tile the only valid one, with the contents `restore`
  // writes to the matrix meanwhile (no copy comes home first: write-only access).
  template <class Restore>
  void overwrite(Restore restore) {
    for (const auto handle : handles_) check(starpu_data_acquire(handle, STARPU_W), "acquire");
    restore();
    for (const auto handle : handles_) starpu_data_release(handle);
  }

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int tiles() const { return tiles_; }
  int tile_size() const { return tile_; }
  bool gpu() const { return gpu_; }
  starpu_data_handle_t at(int i, int j) const { return handles_[index(i, j)]; }
  Codelets& codelets() { return *codelets_; }

 private:
  static size_t index(int i, int j) { return static_cast<size_t>(i) * (i + 1) / 2 + j; }

  int tiles_;
  int tile_;
  bool gpu_;
  void* pinned_ = nullptr;
  size_t pinned_bytes_ = 0;
  std::optional<Codelets> codelets_;  // made once StarPU has started
  std::vector<starpu_data_handle_t> handles_;
};

// The tile (i, j) a task writes, for its name in a trace; for trtri, the diagonal tile it inverts.
struct Written {
  int i, j;
};

// A detached task (StarPU's default for starpu_task_create) that destroys itself after running;
// recorded in `trace`, when given, as "<type> A(i,j)".
void submit(starpu_codelet* cl, int priority, std::initializer_list<starpu_data_handle_t> handles,
            void* cl_arg, StarpuTaskTrace* trace, const char* type, Written tile) {
  starpu_task* task = starpu_task_create();
  task->cl = cl;
  task->cl_arg = cl_arg;  // not copied nor freed: it outlives the task
  task->priority = priority;
  int i = 0;
  for (const auto handle : handles) task->handles[i++] = handle;
  if (trace != nullptr)
    trace->attach(task, std::string(type) + " A(" + std::to_string(tile.i) + "," +
                            std::to_string(tile.j) + ")");
  check(starpu_task_submit(task), "starpu_task_submit");
}

// Asks for a tile in main memory once the tasks submitted before that write it have run, without
// holding back the later tasks that read it: an asynchronous acquire, which StarPU orders after
// those tasks, released as soon as it is granted. As Chameleon hands each finished tile back
// (RUNTIME_data_flush), the copies home then run beside the later columns' kernels instead of
// after the last one.
void home_when_final(starpu_data_handle_t handle) {
  check(starpu_data_acquire_cb(
            handle, STARPU_R,
            [](void* granted) { starpu_data_release(static_cast<starpu_data_handle_t>(granted)); },
            handle),
        "starpu_data_acquire_cb");
}

// The panel of step k < nt - 1 solved through L(k,k)^-1, as Versa's example does it
// (cholesky::submit_tasks_through_inverse): trtri writes the inverse, which the step's trmms
// read. The inverse is scratch, a handle of this step alone registered without a home (home
// node -1): StarPU allocates it on the node where trtri runs and copies it to wherever the trmms
// run, with no buffer in main memory unless a CPU worker runs one of them, and no copy home.
// Unregistered once the step's last trmm is submitted, so StarPU frees it after that trmm; the
// next step's inverse is a new handle, which the trmms still reading this one do not hold back
// (Versa's example does the same with a scratch tile per step, Runtime::scratch_tile). trtri is on
// the critical path with potrf, at potrf's priority; each trmm has its trsm's.
void submit_panel_through_inverse(Session& s, int k, PotrfArg& potrf_arg, KernelClock& clock,
                                  const Priorities& prio, StarpuTaskTrace* trace) {
  Codelets& cl = s.codelets();
  const auto tile = static_cast<uint32_t>(s.tile_size());  // A(k,k) is whole: k < nt - 1
  starpu_data_handle_t inverse = nullptr;
  starpu_matrix_data_register(&inverse, -1, 0, tile, tile, tile, sizeof(double));
  submit(&cl.trtri, prio.potrf(), {s.at(k, k), inverse}, &potrf_arg, trace, "trtri", {k, k});
  for (int m = k + 1; m < s.tiles(); ++m) {
    submit(&cl.trmm, prio.trsm(k, m), {inverse, s.at(m, k)}, &clock, trace, "trmm", {m, k});
    if (s.gpu()) home_when_final(s.at(m, k));
  }
  starpu_data_unregister_submit(inverse);
}

// The whole factorisation's tasks, in the order StarPU's Cholesky example submits them, with the
// priorities it gives them under a bounded range (Priorities); with `solve` PanelSolve::inverse,
// each panel through L(k,k)^-1 (submit_panel_through_inverse). `potrf_args` holds one entry per
// diagonal tile; the arguments outlive the tasks. With GPUs, each tile is asked home once final
// (after its potrf, or the trsm or trmm of its column), as the Versa side does. `trace`, when
// given, records every task.
void submit_factorisation(Session& s, cholesky::PanelSolve solve, std::vector<PotrfArg>& potrf_args,
                          KernelClock& clock, KernelClock& gemm_clock,
                          StarpuTaskTrace* trace = nullptr) {
  const Priorities prio;
  Codelets& cl = s.codelets();
  const int nt = s.tiles();
  for (int k = 0; k < nt; ++k) {
    submit(&cl.potrf, prio.potrf(), {s.at(k, k)}, &potrf_args[k], trace, "potrf", {k, k});
    if (s.gpu()) home_when_final(s.at(k, k));
    if (solve == cholesky::PanelSolve::inverse) {
      if (k + 1 < nt) submit_panel_through_inverse(s, k, potrf_args[k], clock, prio, trace);
    } else {
      for (int m = k + 1; m < nt; ++m) {
        submit(&cl.trsm, prio.trsm(k, m), {s.at(k, k), s.at(m, k)}, &clock, trace, "trsm", {m, k});
        if (s.gpu()) home_when_final(s.at(m, k));
      }
    }
    for (int j = k + 1; j < nt; ++j) {
      submit(&cl.syrk, prio.syrk(k, j), {s.at(j, k), s.at(j, j)}, &clock, trace, "syrk", {j, j});
      for (int m = j + 1; m < nt; ++m)
        submit(&cl.gemm, prio.gemm(), {s.at(m, k), s.at(j, k), s.at(m, j)}, &gemm_clock, trace,
               "gemm", {m, j});
    }
  }
}

// Calibrates the history-based models that dmda and dmdas read on CPUs and GPUs for every tile
// shape a factorisation of size n in tiles of `tile` has, on a matrix of three tile rows with the
// same shapes (two whole tiles and the edge): these policies send a task to an architecture whose
// model lacks STARPU_CALIBRATE_MINIMUM (10) samples for its shape, so the edge's single potrf per
// factorisation would otherwise take tens of timed runs to settle. One session factors that
// matrix until each architecture (CPU, and each GPU) can have had the minimum of them, restoring
// the matrix between factorisations; the models are saved at shutdown for the timed runs. The
// factorisations solve their panels as `solve` says, so that the codelets of the timed runs are
// the ones calibrated.
void calibrate_gpu_models(const char* scheduler, int workers, int n, int tile,
                          cholesky::PanelSolve solve) {
  // (n, tile, solve); the benchmark's thread only.
  static std::set<std::tuple<int, int, cholesky::PanelSolve>> calibrated;
  if (!calibrated.insert({n, tile, solve}).second) return;
  const int edge = n % tile == 0 ? tile : n % tile;
  const int small = std::min(n, 2 * tile + edge);
  const cholesky::MatrixElements<double> original = cholesky::spd_matrix<double>(small);
  cholesky::MatrixElements<double> a = original;
  Session s(scheduler, workers, a.data(), small, tile, true);
  const int architectures = 1 + static_cast<int>(starpu_cuda_worker_get_count());
  const int runs = architectures * starpu_get_env_number_default("STARPU_CALIBRATE_MINIMUM", 10);
  for (int run = 0; run < runs; ++run) {
    Failure failure;
    KernelClock clock, gemm_clock;
    std::vector<PotrfArg> potrf_args(static_cast<size_t>(s.tiles()));
    for (int k = 0; k < s.tiles(); ++k) potrf_args[k] = {k, &failure, &clock};
    submit_factorisation(s, solve, potrf_args, clock, gemm_clock);
    check(starpu_task_wait_for_all(), "starpu_task_wait_for_all");
    failure.throw_if_failed("cholesky_starpu (calibration)", tile);
    s.overwrite([&] { a = original; });
  }
}

}  // namespace

bool starpu_available() { return true; }

bool starpu_gpu_available() {
  return starpu_cholesky::cuda_codelets_built() && cusolver_available();
}

TiledTiming cholesky_starpu(const char* scheduler, int workers, double* a, int n, int tile,
                            cholesky::PanelSolve solve, bool gpu, const std::string& trace_file) {
  if (scheduler == nullptr) throw std::invalid_argument("cholesky_starpu: no scheduler given");
  if (workers < 1) throw std::invalid_argument("cholesky_starpu: workers must be >= 1");
  if (n < 0) throw std::invalid_argument("cholesky_starpu: n must be >= 0");
  if (tile < 1) throw std::invalid_argument("cholesky_starpu: tile must be >= 1");
  if (gpu && !starpu_cholesky::cuda_codelets_built())
    throw std::invalid_argument("cholesky_starpu: this build's StarPU has no CUDA codelets");
  if (n == 0) return {0.0, 0.0};

  openblas_set_num_threads(1);  // the parallelism is StarPU's: one sequential BLAS per worker
  if (gpu && starpu_cholesky::reads_models(scheduler))
    calibrate_gpu_models(scheduler, workers, n, tile, solve);

  // Declared before the session so that they outlive every task, even when submission fails and
  // the session's destructor has to wait for the tasks already submitted.
  Failure failure;
  KernelClock clock, gemm_clock;  // the gemms apart, for their mean time
  const int nt = (n + tile - 1) / tile;
  std::vector<PotrfArg> potrf_args(static_cast<size_t>(nt));
  for (int k = 0; k < nt; ++k) potrf_args[k] = {k, &failure, &clock};

  Session s(scheduler, workers, a, n, tile, gpu);
  std::optional<StarpuTaskTrace> trace;
  if (!trace_file.empty()) trace.emplace();

  const auto start = Clock::now();
  submit_factorisation(s, solve, potrf_args, clock, gemm_clock, trace ? &*trace : nullptr);
  check(starpu_task_wait_for_all(), "starpu_task_wait_for_all");
  if (gpu) s.fetch_home();
  const double seconds = seconds_since(start);
  if (trace) trace->write(trace_file);

  failure.throw_if_failed("cholesky_starpu", tile);
  // The GPU kernels only queue work: their clock says nothing, so no kernel figures then.
  if (gpu) return {seconds};
  const double gemm_seconds = static_cast<double>(gemm_clock.nanoseconds.load()) * 1e-9;
  return {seconds, static_cast<double>(clock.nanoseconds.load()) * 1e-9 + gemm_seconds,
          gemm_seconds, gemm_clock.calls.load()};
}

}  // namespace bench
