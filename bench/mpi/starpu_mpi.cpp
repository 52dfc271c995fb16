// The tiled Cholesky on StarPU-MPI, the peer of cholesky_mpi (examples/cholesky/mpi_main.cpp),
// written as StarPU-MPI's own examples do (mpi/examples/matrix_decomposition): every rank
// registers every tile of the lower triangle, in place on its owner (STARPU_MAIN_RAM; a rank
// makes only the tiles it owns, as cholesky_mpi does: cholesky::OwnedTiles) and without memory
// elsewhere (home node -1), gives it its MPI tag and owner with starpu_mpi_data_register,
// and inserts every task with starpu_mpi_task_insert; each task runs on the owner of the tile it
// writes and StarPU-MPI sends what it reads. A panel's tiles leave the communication cache once
// their last reader is submitted (starpu_mpi_cache_flush), as in StarPU's example. The owners are
// Versa's (versa::mpi::BlockCyclic::for_ranks(P)), the tile kernels those of the single-process
// StarPU peer (bench/cholesky/starpu_kernels.hpp), the clock the same bracket as cholesky_mpi's:
// from the first insert, after a barrier, to starpu_mpi_wait_for_all (which ends in a barrier).
// With --solve inverse each panel is solved through L(k,k)^-1, as cholesky_mpi's is.
//   mpirun -n 2 versa-bench-mpi-starpu --n 4096 --tile 512 [--sched dmda] [--solve inverse]
//          [--check]
#include <cblas.h>
#include <mpi.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "cholesky.hpp"
#include "cholesky/starpu_kernels.hpp"
#include "command_line.hpp"
#include "common/harness.hpp"
#include "common/starpu_support.hpp"
#include "distributed_report.hpp"
#include "mpi/starpu_mpi_session.hpp"
#include "options.hpp"
#include "owned_tiles.hpp"
#include "versa/mpi.hpp"

namespace {

using bench::check;
using namespace bench::starpu_cholesky;

struct Options {
  long n = 4096;
  long tile = 512;
  std::string sched = "dmda";
  cholesky::PanelSolve solve = cholesky::PanelSolve::trsm;
  bool check = false;
};

// Separate histories from the single-process peer's: several ranks save theirs at shutdown.
Models& models() {
  static Models instance("versa_bench_mpi_cholesky");
  return instance;
}

using Session = bench::StarpuMpiSession;

// The lower triangle's tiles, registered on every rank: on the owner in its OwnedTiles
// (STARPU_MAIN_RAM), elsewhere without memory (StarPU-MPI allocates a rank's copy when a task
// there reads the tile).
class DistributedTiles {
 public:
  DistributedTiles(cholesky::OwnedTiles& owned, const Session& s)
      : tiles_(static_cast<int>(owned.tile_rows())) {
    const versa::mpi::BlockCyclic grid = versa::mpi::BlockCyclic::for_ranks(s.size());
    handles_.resize(static_cast<std::size_t>(tiles_) * tiles_);
    owners_.resize(handles_.size(), -1);
    for (int j = 0; j < tiles_; ++j)
      for (int i = j; i < tiles_; ++i) {
        const auto rows = static_cast<uint32_t>(owned.rows(static_cast<std::size_t>(i)));
        const auto cols = static_cast<uint32_t>(owned.rows(static_cast<std::size_t>(j)));
        const int owner = grid.owner(static_cast<std::size_t>(i), static_cast<std::size_t>(j));
        starpu_data_handle_t& h = handles_[index(i, j)];
        if (owner == s.rank())
          starpu_matrix_data_register(
              &h, STARPU_MAIN_RAM,
              reinterpret_cast<uintptr_t>(
                  owned.data(static_cast<std::size_t>(i), static_cast<std::size_t>(j))),
              rows, rows, cols, sizeof(double));
        else
          starpu_matrix_data_register(&h, -1, 0, rows, rows, cols, sizeof(double));
        starpu_mpi_data_register(h, static_cast<starpu_mpi_tag_t>(index(i, j)), owner);
        owners_[index(i, j)] = owner;
      }
  }
  // Unregistering copies each tile back to its home: on its owner, where it already is.
  ~DistributedTiles() {
    for (const auto h : handles_)
      if (h != nullptr) starpu_data_unregister(h);
  }
  DistributedTiles(const DistributedTiles&) = delete;
  DistributedTiles& operator=(const DistributedTiles&) = delete;

  int tiles() const { return tiles_; }
  starpu_data_handle_t operator()(int i, int j) const { return handles_[index(i, j)]; }
  bool owns(int i, int j, int rank) const { return owners_[index(i, j)] == rank; }

 private:
  std::size_t index(int i, int j) const { return static_cast<std::size_t>(i) + j * tiles_; }
  int tiles_;
  std::vector<starpu_data_handle_t> handles_;
  std::vector<int> owners_;
};

// The panel of step k < nt - 1 solved through L(k,k)^-1, as cholesky_mpi's (and the
// single-process peer's, bench/cholesky/starpu.cpp): trtri writes the step's inverse, which the
// trmms read. The inverse is a handle of this step alone, registered without memory (home node
// -1) with A(k,k)'s owner, where trtri runs: StarPU-MPI sends it to the ranks whose trmms read
// it. Its tag follows the tiles' (nt * nt + k), it leaves the communication cache after its last
// reader, and it is unregistered once that reader is submitted, so that StarPU frees it after.
void insert_panel_through_inverse(const DistributedTiles& a, int k, Codelets& cl,
                                  PotrfArg& potrf_arg, KernelClock& clock) {
  const int nt = a.tiles();
  const Priorities prio;
  const auto tile = static_cast<uint32_t>(starpu_matrix_get_nx(a(k, k)));
  starpu_data_handle_t inverse = nullptr;
  starpu_matrix_data_register(&inverse, -1, 0, tile, tile, tile, sizeof(double));
  starpu_mpi_data_register(inverse, static_cast<starpu_mpi_tag_t>(nt) * nt + k,
                           starpu_mpi_data_get_rank(a(k, k)));
  check(starpu_mpi_task_insert(MPI_COMM_WORLD, &cl.trtri, STARPU_PRIORITY, prio.potrf(), STARPU_R,
                               a(k, k), STARPU_W, inverse, STARPU_CL_ARGS_NFREE, &potrf_arg,
                               sizeof(PotrfArg), 0),
        "starpu_mpi_task_insert");
  for (int m = k + 1; m < nt; ++m)
    check(starpu_mpi_task_insert(MPI_COMM_WORLD, &cl.trmm, STARPU_PRIORITY, prio.trsm(k, m),
                                 STARPU_R, inverse, STARPU_RW, a(m, k), STARPU_CL_ARGS_NFREE,
                                 &clock, sizeof(KernelClock), 0),
          "starpu_mpi_task_insert");
  starpu_mpi_cache_flush(MPI_COMM_WORLD, inverse);
  starpu_data_unregister_submit(inverse);
}

// Inserts the factorisation on every rank (StarPU-MPI's cholesky, right-looking variant),
// with the priorities of the single-process peer; with `solve` PanelSolve::inverse, each panel
// through L(k,k)^-1 (insert_panel_through_inverse).
void insert_factorisation(const DistributedTiles& a, int rank, cholesky::PanelSolve solve,
                          Codelets& cl, std::vector<PotrfArg>& potrf_args, KernelClock& clock) {
  const int nt = a.tiles();
  const Priorities prio;
  const auto clock_arg = [&] { return static_cast<void*>(&clock); };
  for (int k = 0; k < nt; ++k) {
    check(
        starpu_mpi_task_insert(MPI_COMM_WORLD, &cl.potrf, STARPU_PRIORITY, prio.potrf(), STARPU_RW,
                               a(k, k), STARPU_CL_ARGS_NFREE, &potrf_args[k], sizeof(PotrfArg), 0),
        "starpu_mpi_task_insert");
    if (solve == cholesky::PanelSolve::inverse) {
      if (k + 1 < nt) insert_panel_through_inverse(a, k, cl, potrf_args[k], clock);
    } else {
      for (int m = k + 1; m < nt; ++m)
        check(starpu_mpi_task_insert(MPI_COMM_WORLD, &cl.trsm, STARPU_PRIORITY, prio.trsm(k, m),
                                     STARPU_R, a(k, k), STARPU_RW, a(m, k), STARPU_CL_ARGS_NFREE,
                                     clock_arg(), sizeof(KernelClock), 0),
              "starpu_mpi_task_insert");
    }
    starpu_mpi_cache_flush(MPI_COMM_WORLD, a(k, k));
    if (a.owns(k, k, rank)) starpu_data_wont_use(a(k, k));
    for (int j = k + 1; j < nt; ++j) {
      check(starpu_mpi_task_insert(MPI_COMM_WORLD, &cl.syrk, STARPU_PRIORITY, prio.syrk(k, j),
                                   STARPU_R, a(j, k), STARPU_RW, a(j, j), STARPU_CL_ARGS_NFREE,
                                   clock_arg(), sizeof(KernelClock), 0),
            "starpu_mpi_task_insert");
      for (int m = j + 1; m < nt; ++m)
        check(starpu_mpi_task_insert(MPI_COMM_WORLD, &cl.gemm, STARPU_PRIORITY, prio.gemm(),
                                     STARPU_R, a(m, k), STARPU_R, a(j, k), STARPU_RW, a(m, j),
                                     STARPU_CL_ARGS_NFREE, clock_arg(), sizeof(KernelClock), 0),
              "starpu_mpi_task_insert");
      // A(j,k)'s last reader is the gemm of row nt-1 (or the syrk when j = nt-1).
      starpu_mpi_cache_flush(MPI_COMM_WORLD, a(j, k));
      if (a.owns(j, k, rank)) starpu_data_wont_use(a(j, k));
    }
  }
}

// The factor gathered on rank 0 (every rank calls it): the n x n matrix there, with L in its
// lower triangle; empty elsewhere.
std::vector<double> gather_on_rank_0(const DistributedTiles& tiles, long n, long tile, int rank) {
  std::vector<double> factor;
  if (rank == 0) factor.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  for (int j = 0; j < tiles.tiles(); ++j)
    for (int i = j; i < tiles.tiles(); ++i) {
      const starpu_data_handle_t h = tiles(i, j);
      starpu_mpi_get_data_on_node(MPI_COMM_WORLD, h, 0);
      if (rank != 0) continue;
      check(starpu_data_acquire(h, STARPU_R), "starpu_data_acquire");
      cholesky::place_tile(
          factor.data(), n, tile, static_cast<std::size_t>(i), static_cast<std::size_t>(j),
          reinterpret_cast<const double*>(starpu_matrix_get_local_ptr(h)),
          starpu_matrix_get_local_ld(h), starpu_matrix_get_nx(h), starpu_matrix_get_ny(h));
      starpu_data_release(h);
    }
  return factor;
}

int run(const Options& o, int* argc, char*** argv) {
  const int n = static_cast<int>(o.n);
  const int tile = static_cast<int>(o.tile);
  openblas_set_num_threads(1);  // the parallelism is StarPU's: one sequential BLAS per worker
  Session s(argc, argv, o.sched.c_str());
  Codelets cl(o.sched.c_str(), models());
  const versa::mpi::BlockCyclic grid = versa::mpi::BlockCyclic::for_ranks(s.size());
  cholesky::OwnedTiles owned(o.n, o.tile, s.rank(),
                             [&](std::size_t i, std::size_t j) { return grid.owner(i, j); });
  // Outlive every task: declared before the tiles, whose destructor waits for them.
  Failure failure;
  KernelClock clock;
  const int nt = (n + tile - 1) / tile;
  std::vector<PotrfArg> potrf_args(static_cast<std::size_t>(nt));
  for (int k = 0; k < nt; ++k) potrf_args[k] = {k, &failure, &clock};
  int status = 0;
  {
    DistributedTiles tiles(owned, s);
    starpu_mpi_barrier(MPI_COMM_WORLD);  // every rank has registered before the clock starts
    const auto start = bench::Clock::now();
    insert_factorisation(tiles, s.rank(), o.solve, cl, potrf_args, clock);
    check(starpu_mpi_wait_for_all(MPI_COMM_WORLD), "starpu_mpi_wait_for_all");
    const double seconds = bench::seconds_since(start);
    failure.throw_if_failed("StarPU-MPI cholesky", tile);
    std::printf(
        "rank %d: %.3f s in tile kernels; %.1f MiB of tiles owned, %.1f MiB resident at most\n",
        s.rank(), clock.nanoseconds.load() * 1e-9, static_cast<double>(owned.bytes()) / (1 << 20),
        cholesky::peak_resident_mib());
    std::vector<double> factor;
    if (o.check) {
      factor = gather_on_rank_0(tiles, o.n, o.tile, s.rank());
      check(starpu_mpi_wait_for_all(MPI_COMM_WORLD), "starpu_mpi_wait_for_all");
    }
    if (s.rank() == 0) {
      const cholesky::MatrixElements<double> original =
          o.check ? cholesky::spd_matrix<double>(o.n) : cholesky::MatrixElements<double>{};
      status = cholesky::report_distributed("starpu-mpi", o.n, o.tile, s.size(), 1,
                                            "1 worker, " + o.sched, seconds, o.check,
                                            original.data(), factor.data());
    }
    std::fflush(stdout);
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  example::OptionParser parser{
      "versa-bench-mpi-starpu",
      "Factors a random SPD matrix with the tiled Cholesky on StarPU-MPI."};
  Options o;
  cholesky::add_matrix_options(parser, o.n, o.tile);
  parser.option("--sched", o.sched, "StarPU scheduling policy (one CPU worker per rank)")
      .show_default();
  cholesky::add_panel_solve_option(parser, o.solve);
  cholesky::add_gathered_check_option(parser, o.check);
  return example::run_tool(parser, argc, argv, [&] { return run(o, &argc, &argv); });
}
