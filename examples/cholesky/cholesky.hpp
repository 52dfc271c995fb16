// Tiled Cholesky factorisation A = L L^T on Versa: the algorithm, its tile kernels on
// OpenBLAS/LAPACKE, and the placement of each kernel. Used by the command-line tool (main.cpp),
// the tests and the benchmarks; a template for a user's own tiled algorithm.
#pragma once

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_kernels.hpp"
#include "large_array_allocator.hpp"
#include "parallel_for.hpp"
#include "versa/versa.hpp"

namespace cholesky {

// Placement rule per kernel name ("potrf", "trsm", "syrk", "gemm"); missing ones: automatic.
using Placements = std::map<std::string, versa::Placement>;

// Parses "potrf=cpu,gemm=auto" (values: cpu, gpu, prefer_gpu, auto). Throws
// std::invalid_argument naming the bad item.
Placements parse_placements(const std::string& text);

// BLAS and LAPACK for one precision. invert_lower: inverse = L^-1 (lower triangles; returns
// LAPACK's info, > 0 when L is singular); trmm: b = b inverse^T, trsm's result from it.
template <class T>
struct Blas;

template <>
struct Blas<double> {
  static int potrf(std::size_t n, double* a, std::size_t lda) {
    return LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', static_cast<int>(n), a, static_cast<int>(lda));
  }
  static void trsm(std::size_t m, std::size_t n, const double* l, std::size_t ldl, double* b,
                   std::size_t ldb) {
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
                static_cast<int>(m), static_cast<int>(n), 1.0, l, static_cast<int>(ldl), b,
                static_cast<int>(ldb));
  }
  static int invert_lower(std::size_t n, const double* l, std::size_t ldl, double* inverse,
                          std::size_t ldi) {
    LAPACKE_dlacpy(LAPACK_COL_MAJOR, 'L', static_cast<int>(n), static_cast<int>(n), l,
                   static_cast<int>(ldl), inverse, static_cast<int>(ldi));
    return LAPACKE_dtrtri(LAPACK_COL_MAJOR, 'L', 'N', static_cast<int>(n), inverse,
                          static_cast<int>(ldi));
  }
  static void trmm(std::size_t m, std::size_t n, const double* inverse, std::size_t ldi, double* b,
                   std::size_t ldb) {
    cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
                static_cast<int>(m), static_cast<int>(n), 1.0, inverse, static_cast<int>(ldi), b,
                static_cast<int>(ldb));
  }
  static void syrk(std::size_t n, std::size_t k, const double* a, std::size_t lda, double* c,
                   std::size_t ldc) {
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, static_cast<int>(n), static_cast<int>(k),
                -1.0, a, static_cast<int>(lda), 1.0, c, static_cast<int>(ldc));
  }
  static void gemm(std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
                   const double* b, std::size_t ldb, double* c, std::size_t ldc) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), -1.0, a, static_cast<int>(lda), b, static_cast<int>(ldb), 1.0,
                c, static_cast<int>(ldc));
  }
};

template <>
struct Blas<float> {
  static int potrf(std::size_t n, float* a, std::size_t lda) {
    return LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', static_cast<int>(n), a, static_cast<int>(lda));
  }
  static void trsm(std::size_t m, std::size_t n, const float* l, std::size_t ldl, float* b,
                   std::size_t ldb) {
    cblas_strsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
                static_cast<int>(m), static_cast<int>(n), 1.0f, l, static_cast<int>(ldl), b,
                static_cast<int>(ldb));
  }
  static int invert_lower(std::size_t n, const float* l, std::size_t ldl, float* inverse,
                          std::size_t ldi) {
    LAPACKE_slacpy(LAPACK_COL_MAJOR, 'L', static_cast<int>(n), static_cast<int>(n), l,
                   static_cast<int>(ldl), inverse, static_cast<int>(ldi));
    return LAPACKE_strtri(LAPACK_COL_MAJOR, 'L', 'N', static_cast<int>(n), inverse,
                          static_cast<int>(ldi));
  }
  static void trmm(std::size_t m, std::size_t n, const float* inverse, std::size_t ldi, float* b,
                   std::size_t ldb) {
    cblas_strmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
                static_cast<int>(m), static_cast<int>(n), 1.0f, inverse, static_cast<int>(ldi), b,
                static_cast<int>(ldb));
  }
  static void syrk(std::size_t n, std::size_t k, const float* a, std::size_t lda, float* c,
                   std::size_t ldc) {
    cblas_ssyrk(CblasColMajor, CblasLower, CblasNoTrans, static_cast<int>(n), static_cast<int>(k),
                -1.0f, a, static_cast<int>(lda), 1.0f, c, static_cast<int>(ldc));
  }
  static void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                   const float* b, std::size_t ldb, float* c, std::size_t ldc) {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), -1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                1.0f, c, static_cast<int>(ldc));
  }
};

// How each step solves its panel, the tiles A(m,k) below the diagonal, against L(k,k):
//   trsm     one triangular solve per tile (BLAS trsm). The default.
//   inverse  L(k,k)^-1 once per step (LAPACK trtri, the task type `trtri`), then one triangular
//            product per tile (`trmm`, trsm's flops): on a GPU a product keeps the SMs busy,
//            where cuBLAS's solve of a 2048 tile is a chain of small kernels (9.7 TFLOP/s on an
//            H200, against gemm's 59). A solve is backward stable, a product through the
//            inverse is not (its error grows with the condition number of L(k,k)): for matrices
//            whose diagonal tiles are well conditioned, as MAGMA's solves through inverted
//            diagonal blocks assume.
enum class PanelSolve { trsm, inverse };

// Parses "trsm" or "inverse". Throws std::invalid_argument naming the bad value.
PanelSolve parse_panel_solve(const std::string& text);

// The kernels, in the order of TaskCounts: their task types' names, under which
// Runtime::task_statistics reports them.
inline constexpr const char* kernels[6] = {"potrf", "trsm", "trtri", "trmm", "syrk", "gemm"};

// Number of tasks of each kernel for a matrix of `tiles` x `tiles` tiles.
struct TaskCounts {
  std::size_t potrf = 0, trsm = 0, trtri = 0, trmm = 0, syrk = 0, gemm = 0;
  std::size_t total() const { return potrf + trsm + trtri + trmm + syrk + gemm; }
  // Tasks of kernels[kernel].
  std::size_t operator[](int kernel) const {
    const std::size_t counts[6] = {potrf, trsm, trtri, trmm, syrk, gemm};
    return counts[kernel];
  }
};
TaskCounts task_counts(std::size_t tiles, PanelSolve solve = PanelSolve::trsm);

// Which of the ready tasks go first (versa::priority), a choice that matters most where a GPU
// waits for the tiles to arrive:
//   critical_path  the tasks that unlock the next panel (potrf(k), and the trsm and syrk of
//                  tile row k+1) have priority 1, every other task none, as StarPU's tiled
//                  Cholesky gives them under a scheduler with bounded priorities. The rest runs
//                  in the order its data becomes ready, the newest first, while its inputs are in
//                  cache. Ranking every task instead ran wavefronts across steps, each gemm
//                  meeting its inputs cold: on 2 cores at n = 4096 a 128-tile gemm then took
//                  148-165 us against 138-141, and the factorisation ran up to 20% slower.
//                  Program order for the rest (each task one priority below the one before)
//                  gained 4% at tile 128 and lost 7% at tile 64 (docs/performance.md, "Tiled
//                  Cholesky"). On a GPU the tasks of priority 1 also run on its high-priority
//                  streams (Config::cuda_priority_streams), ahead of the other streams' gemms.
//                  The default.
//   wavefront      every task ranked 2nt - 2k - m - j (task of step k on tile (m, j); StarPU's
//                  scheme for unbounded priorities): the tiles near the top left first, across
//                  steps, so that a device fed over a link starts the next steps on the tiles
//                  that have arrived while the rest are still being copied. On a GPU the tasks
//                  of positive rank (all but those of the last steps) run on its high-priority
//                  streams.
//   panel          as critical_path, with every tile of the panel (each trsm, or trmm through
//                  the inverse) at priority 1, not only row k+1's: on a GPU the whole panel then
//                  runs on the high-priority streams, where Config::cuda_panel_sms gives it SMs
//                  of its own beside the trailing update's gemms.
enum class Priorities { critical_path, wavefront, panel };

// Parses "critical_path", "wavefront" or "panel". Throws std::invalid_argument naming the bad
// value.
Priorities parse_priorities(const std::string& text);

// What a RESULT line's parameters add for `scheme`: ",priorities=wavefront" or
// ",priorities=panel"; nothing for the default, so that its results keep their names.
std::string priorities_parameter(Priorities scheme);

// The priority of each task, by kernel, step k and tile (m, j), in a matrix of `tiles` x `tiles`
// tiles: what submit_tasks gives them.
class TaskPriorities {
 public:
  TaskPriorities(Priorities scheme, int tiles)
      : wavefront_(scheme == Priorities::wavefront),
        whole_panel_(scheme == Priorities::panel),
        nt_(tiles) {}
  int potrf(int k) const { return wavefront_ ? 2 * nt_ - 2 * k : 1; }
  int trsm(int k, int m) const {
    return wavefront_ ? 2 * nt_ - 2 * k - m : (whole_panel_ || m == k + 1 ? 1 : 0);
  }
  int syrk(int k, int m) const {
    return wavefront_ ? 2 * nt_ - 2 * k - 2 * m : (m == k + 1 ? 1 : 0);
  }
  int gemm(int k, int m, int j) const { return wavefront_ ? 2 * nt_ - 2 * k - m - j : 0; }

 private:
  bool wavefront_;
  bool whole_panel_;
  int nt_;
};

// How submit_factorisation orders and hands home the tasks.
struct Schedule {
  Priorities priorities = Priorities::critical_path;
  // Copy each tile home once it is final (after its potrf, or the trsm of its column:
  // Runtime::copy_home), from the device that holds it while the later columns' kernels run,
  // where wait_all would copy every tile home after the last kernel (on an emulated device at
  // n = 4096, tile 512, 35 of the 36 copies home then come before the last kernel instead of
  // none; on an H200 at n = 30000, tile 2048, the factorisation ran 1.3x faster). The device
  // keeps its copy for the later tasks that read the tile. Worth it where devices hold the
  // tiles; it adds a task per tile.
  bool home_when_final = false;
  // Called with k once step k's tasks are submitted, when its column (A(k,k) to A(nt-1,k)) has
  // no reader left to submit: a distributed run drops the other ranks' copies of it there
  // (versa::mpi::Runtime::flush), so that a rank holds its own tiles and the panels in use,
  // not every tile it ever received.
  std::function<void(int)> after_step = nullptr;
};

namespace detail {

// The steps of the right-looking factorisation, each step's panel (the tiles below its diagonal
// tile) submitted by solve_panel(k, priorities).
template <class Runtime, class Matrix, class Potrf, class SolvePanel, class Syrk, class Gemm>
void submit_steps(Runtime& rt, const Matrix& a, const Potrf& potrf, const SolvePanel& solve_panel,
                  const Syrk& syrk, const Gemm& gemm, const Schedule& schedule) {
  const int nt = static_cast<int>(a.tile_rows());
  const TaskPriorities priority(schedule.priorities, nt);
  for (int k = 0; k < nt; ++k) {
    rt.submit(potrf, versa::write(a(k, k)), versa::priority(priority.potrf(k)),
              versa::name("potrf A(" + std::to_string(k) + "," + std::to_string(k) + ")"));
    if (schedule.home_when_final) rt.copy_home(a(k, k));
    solve_panel(k, priority);
    for (int m = k + 1; m < nt; ++m) {
      rt.submit(syrk, versa::read(a(m, k)), versa::write(a(m, m)),
                versa::priority(priority.syrk(k, m)));
      for (int j = k + 1; j < m; ++j)
        rt.submit(gemm, versa::read(a(m, k)), versa::read(a(j, k)), versa::write(a(m, j)),
                  versa::priority(priority.gemm(k, m, j)));
    }
    if (schedule.after_step) schedule.after_step(k);
  }
}

}  // namespace detail

// Submits the right-looking tiled factorisation of the lower triangle of `a` (square, tiled),
// its tile kernels being the task types `potrf` (writes A(k,k)), `trsm` (reads A(k,k), writes
// A(m,k)), `syrk` (reads A(m,k), writes A(m,m)) and `gemm` (reads A(m,k) and A(j,k), writes
// A(m,j)), and returns without waiting. `rt` is a versa::Runtime, or a versa::mpi::Runtime
// (every rank calls this; each task runs on the owner of the tile it writes); `a` a
// versa::TiledMatrix<T>, or anything with tile_rows() whose a(i, j) is the TileHandle<T> of
// tile (i, j) for i >= j. potrf tasks are named "potrf A(k,k)", so that Runtime::wait_all says
// which tile failed.
template <class Runtime, class Matrix, class Potrf, class Trsm, class Syrk, class Gemm>
void submit_tasks(Runtime& rt, const Matrix& a, const Potrf& potrf, const Trsm& trsm,
                  const Syrk& syrk, const Gemm& gemm, const Schedule& schedule) {
  const int nt = static_cast<int>(a.tile_rows());
  const auto solve_panel = [&](int k, const TaskPriorities& priority) {
    for (int m = k + 1; m < nt; ++m) {
      rt.submit(trsm, versa::read(a(k, k)), versa::write(a(m, k)),
                versa::priority(priority.trsm(k, m)));
      if (schedule.home_when_final) rt.copy_home(a(m, k));
    }
  };
  detail::submit_steps(rt, a, potrf, solve_panel, syrk, gemm, schedule);
}

namespace detail {

// A scratch tile of rows x rows beside `beside`: on a distributed runtime (versa::mpi, whose
// scratch data has an owner), owned by the rank that owns `beside`.
template <class T, class Runtime, class Tile>
versa::TileHandle<T> scratch_tile_beside(Runtime& rt, std::size_t rows, const Tile& beside,
                                         std::string name) {
  if constexpr (requires { rt.owner(beside); })
    return rt.template scratch_tile<T>(rows, rows, rt.owner(beside), std::move(name));
  else
    return rt.template scratch_tile<T>(rows, rows, std::move(name));
}

}  // namespace detail

// submit_tasks with each panel solved through L(k,k)^-1 (PanelSolve::inverse): `trtri` (reads
// A(k,k), writes the step's inverse) and then `trmm` (reads the inverse, writes A(m,k)) in place
// of trsm. Each step's inverse is a scratch tile of its own (Runtime::scratch_tile), as StarPU's
// temporary handle per step: the next step's trtri does not wait for this step's trmms, the
// handle goes once the step is submitted and the runtime frees the tile after its trmms (on a
// device, the tile is made and dropped there: it never crosses the host link; on ranks, it is
// A(k,k)'s owner's, which runs the trtri and sends the inverse where A(k,k) went). trtri goes
// with potrf on the critical path, at potrf's priority.
template <class Runtime, class Matrix, class Potrf, class Trtri, class Trmm, class Syrk, class Gemm>
void submit_tasks_through_inverse(Runtime& rt, const Matrix& a, const Potrf& potrf,
                                  const Trtri& trtri, const Trmm& trmm, const Syrk& syrk,
                                  const Gemm& gemm, const Schedule& schedule) {
  using T = typename std::remove_cvref_t<decltype(a(0, 0))>::element_type;
  const int nt = static_cast<int>(a.tile_rows());
  const auto solve_panel = [&](int k, const TaskPriorities& priority) {
    if (k + 1 == nt) return;
    const std::size_t rows = a.rows_of(static_cast<std::size_t>(k));
    const versa::TileHandle<T> inverse =
        detail::scratch_tile_beside<T>(rt, rows, a(k, k), "L(k,k)^-1");
    rt.submit(trtri, versa::read(a(k, k)), versa::write_only(inverse),
              versa::priority(priority.potrf(k)));
    for (int m = k + 1; m < nt; ++m) {
      rt.submit(trmm, versa::read(inverse), versa::write(a(m, k)),
                versa::priority(priority.trsm(k, m)));
      if (schedule.home_when_final) rt.copy_home(a(m, k));
    }
  };
  detail::submit_steps(rt, a, potrf, solve_panel, syrk, gemm, schedule);
}

namespace detail {

// submit_tasks, or for PanelSolve::inverse submit_tasks_through_inverse, with the example's
// kernels.
template <class Runtime, class Matrix>
void submit_with_kernels(Runtime& rt, const Matrix& a, PanelSolve solve,
                         const Placements& placements, const Schedule& schedule) {
  using T = typename std::remove_cvref_t<decltype(a(0, 0))>::element_type;
  using versa::Tile;
  auto place = [&](const char* kernel) {
    auto it = placements.find(kernel);
    return it == placements.end() ? versa::Placement::automatic : it->second;
  };
  // Work hints are the kernels' flops, which the performance model keys on. The emulated
  // device runs the CPU bodies; the CUDA bodies call cuda_kernels.hpp, and Versa drops them
  // when it is built without CUDA.
  const auto potrf =
      versa::task_type("potrf")
          .cpu([](Tile<T> akk) {
            const int info = Blas<T>::potrf(akk.rows(), akk.data(), akk.ld());
            if (info > 0)
              throw std::runtime_error("the tile is not positive definite (leading minor " +
                                       std::to_string(info) + " of the tile)");
            if (info < 0)
              throw std::runtime_error("potrf: invalid argument " + std::to_string(-info));
          })
          .cuda([](versa::CudaContext& gpu, Tile<T> akk) {
            cuda::potrf(gpu, static_cast<int>(akk.rows()), akk.data(), static_cast<int>(akk.ld()));
          })
          .work([](const versa::Shapes& s) { return 1.0 * s.rows(0) * s.rows(0) * s.rows(0) / 3; })
          .placement(place("potrf"));
  const auto trsm =
      versa::task_type("trsm")
          .cpu([](Tile<const T> akk, Tile<T> amk) {
            Blas<T>::trsm(amk.rows(), amk.cols(), akk.data(), akk.ld(), amk.data(), amk.ld());
          })
          .cuda([](versa::CudaContext& gpu, Tile<const T> akk, Tile<T> amk) {
            cuda::trsm(gpu, static_cast<int>(amk.rows()), static_cast<int>(amk.cols()), akk.data(),
                       static_cast<int>(akk.ld()), amk.data(), static_cast<int>(amk.ld()));
          })
          .work([](const versa::Shapes& s) { return 1.0 * s.rows(1) * s.cols(1) * s.cols(1); })
          .placement(place("trsm"));
  const auto trtri =
      versa::task_type("trtri")
          .cpu([](Tile<const T> akk, Tile<T> inverse) {
            const int info = Blas<T>::invert_lower(akk.rows(), akk.data(), akk.ld(), inverse.data(),
                                                   inverse.ld());
            if (info > 0)
              throw std::runtime_error("trtri: the diagonal tile is singular (diagonal entry " +
                                       std::to_string(info) + ")");
            if (info < 0)
              throw std::runtime_error("trtri: invalid argument " + std::to_string(-info));
          })
          .cuda([](versa::CudaContext& gpu, Tile<const T> akk, Tile<T> inverse) {
            cuda::invert_lower(gpu, static_cast<int>(akk.rows()), akk.data(),
                               static_cast<int>(akk.ld()), inverse.data(),
                               static_cast<int>(inverse.ld()));
          })
          .work([](const versa::Shapes& s) { return 1.0 * s.rows(0) * s.rows(0) * s.rows(0) / 3; })
          .placement(place("trtri"));
  const auto trmm =
      versa::task_type("trmm")
          .cpu([](Tile<const T> inverse, Tile<T> amk) {
            Blas<T>::trmm(amk.rows(), amk.cols(), inverse.data(), inverse.ld(), amk.data(),
                          amk.ld());
          })
          .cuda([](versa::CudaContext& gpu, Tile<const T> inverse, Tile<T> amk) {
            cuda::trmm(gpu, static_cast<int>(amk.rows()), static_cast<int>(amk.cols()),
                       inverse.data(), static_cast<int>(inverse.ld()), amk.data(),
                       static_cast<int>(amk.ld()));
          })
          .work([](const versa::Shapes& s) { return 1.0 * s.rows(1) * s.cols(1) * s.cols(1); })
          .placement(place("trmm"));
  const auto syrk =
      versa::task_type("syrk")
          .cpu([](Tile<const T> amk, Tile<T> amm) {
            Blas<T>::syrk(amm.rows(), amk.cols(), amk.data(), amk.ld(), amm.data(), amm.ld());
          })
          .cuda([](versa::CudaContext& gpu, Tile<const T> amk, Tile<T> amm) {
            cuda::syrk(gpu, static_cast<int>(amm.rows()), static_cast<int>(amk.cols()), amk.data(),
                       static_cast<int>(amk.ld()), amm.data(), static_cast<int>(amm.ld()));
          })
          .work([](const versa::Shapes& s) { return 1.0 * s.rows(1) * s.rows(1) * s.cols(0); })
          .placement(place("syrk"));
  const auto gemm =
      versa::task_type("gemm")
          .cpu([](Tile<const T> amk, Tile<const T> ajk, Tile<T> amj) {
            Blas<T>::gemm(amj.rows(), amj.cols(), amk.cols(), amk.data(), amk.ld(), ajk.data(),
                          ajk.ld(), amj.data(), amj.ld());
          })
          .cuda([](versa::CudaContext& gpu, Tile<const T> amk, Tile<const T> ajk, Tile<T> amj) {
            cuda::gemm(gpu, static_cast<int>(amj.rows()), static_cast<int>(amj.cols()),
                       static_cast<int>(amk.cols()), amk.data(), static_cast<int>(amk.ld()),
                       ajk.data(), static_cast<int>(ajk.ld()), amj.data(),
                       static_cast<int>(amj.ld()));
          })
          .work([](const versa::Shapes& s) { return 2.0 * s.rows(2) * s.cols(2) * s.cols(0); })
          .placement(place("gemm"));
  if (solve == PanelSolve::inverse)
    submit_tasks_through_inverse(rt, a, potrf, trtri, trmm, syrk, gemm, schedule);
  else
    submit_tasks(rt, a, potrf, trsm, syrk, gemm, schedule);
}

}  // namespace detail

// submit_tasks with the tile kernels of OpenBLAS/LAPACKE on CPUs and cuBLAS/cuSOLVER on GPUs
// (the emulated device runs the CPU ones), placed by `placements`. A tile that is not positive
// definite makes its potrf task throw std::runtime_error. Tile kernels run sequential BLAS: call
// use_one_blas_thread() first when BLAS is threaded.
template <class Runtime, class Matrix>
void submit_factorisation(Runtime& rt, const Matrix& a, const Placements& placements = {},
                          const Schedule& schedule = {}) {
  detail::submit_with_kernels(rt, a, PanelSolve::trsm, placements, schedule);
}

// submit_factorisation with each panel solved by `solve`: through L(k,k)^-1
// (PanelSolve::inverse, submit_tasks_through_inverse: the task types `trtri` and `trmm` in place
// of `trsm`), or by trsm.
//   cholesky::submit_factorisation(rt, tiles, cholesky::PanelSolve::inverse);
//   rt.wait_all();
template <class Runtime, class Matrix>
void submit_factorisation(Runtime& rt, const Matrix& a, PanelSolve solve,
                          const Placements& placements = {}, const Schedule& schedule = {}) {
  detail::submit_with_kernels(rt, a, solve, placements, schedule);
}

// Makes OpenBLAS run single-threaded, so that each worker runs one BLAS thread (a threaded BLAS
// inside tasks would oversubscribe the cores).
void use_one_blas_thread();

// The test matrix of the examples and benchmarks, of order n: random symmetric and made
// diagonally dominant, hence positive definite. Entry (i, j) is drawn from the pair {i, j} alone
// (a counter-based hash, splitmix64's finaliser), uniform in [-1, 1), plus n on the diagonal: the
// same on every call and every rank, and any tile of it can be made where it is needed (a rank
// of a distributed run makes only the tiles it owns).
template <class T>
T spd_entry(long n, long i, long j) {
  const auto [low, high] = std::minmax(i, j);
  std::uint64_t z = (static_cast<std::uint64_t>(high) * static_cast<std::uint64_t>(n) +
                     static_cast<std::uint64_t>(low) + 1) *
                    0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const double uniform = static_cast<double>(z >> 11) * 0x1.0p-53;  // [0, 1)
  return static_cast<T>(2.0 * uniform - 1.0 + (i == j ? static_cast<double>(n) : 0.0));
}

// Writes the rows x cols block of the test matrix of order n whose top left entry is (row, col)
// to `out`, column-major with leading dimension ld.
template <class T>
void spd_block(long n, long row, long col, long rows, long cols, T* out, std::size_t ld) {
  for (long c = 0; c < cols; ++c)
    for (long r = 0; r < rows; ++r)
      out[static_cast<std::size_t>(r) + static_cast<std::size_t>(c) * ld] =
          spd_entry<T>(n, row + r, col + c);
}

// The elements of a whole matrix, column-major, as the tools hold the test matrix and its
// copies: allocated without being zeroed (in huge pages where large), so that the parallel fill
// (spd_matrix, copy_matrix) touches their pages first, on every core.
template <class T>
using MatrixElements = std::vector<T, example::LargeArrayAllocator<T>>;

// The whole test matrix, column-major (leading dimension n), its columns made on every core:
// one thread takes seconds at n = 30000, at the start of every tool that factors it.
template <class T>
MatrixElements<T> spd_matrix(long n) {
  const auto order = static_cast<std::size_t>(n);
  MatrixElements<T> a(order * order);
  example::parallel_for(
      order,
      [&](std::size_t begin, std::size_t end) {
        spd_block(n, 0, static_cast<long>(begin), n, static_cast<long>(end - begin),
                  a.data() + begin * order, order);
      },
      64);
  return a;
}

// `to` = `from`, copied on every core: the benchmarks copy the test matrix before each run, and
// at the GPU's sizes it is gigabytes (7.2 GB at n = 30000), seconds for one thread.
template <class T>
void copy_matrix(const MatrixElements<T>& from, MatrixElements<T>& to) {
  to.resize(from.size());
  example::parallel_for(
      from.size(),
      [&](std::size_t begin, std::size_t end) {
        std::copy(from.begin() + static_cast<std::ptrdiff_t>(begin),
                  from.begin() + static_cast<std::ptrdiff_t>(end),
                  to.begin() + static_cast<std::ptrdiff_t>(begin));
      },
      std::size_t{1} << 20);
}

// Checks of a factor: `a` is the n x n symmetric matrix (column-major, leading dimension n) and
// the lower triangle of `factor` is L (its strict upper triangle is ignored). Both run OpenBLAS
// on every core (call them when no factorisation runs) and leave it that way.
//
// ||A - L L^T||_F / (||A||_F n eps), over the lower triangle (off-diagonal entries count twice):
// O(n^3), what `cholesky --check` prints.
template <class T>
double scaled_residual(const T* a, const T* factor, std::size_t n);
// max over `vectors` random x of ||A x - L (L^T x)||_2 / (||A||_F ||x||_2 n eps): O(n^2) per
// vector, never larger than scaled_residual, and large for a wrong factor with overwhelming
// probability. For matrices too large to check exactly in reasonable time.
double scaled_residual_estimate(const double* a, const double* factor, std::size_t n,
                                int vectors = 2);

}  // namespace cholesky
