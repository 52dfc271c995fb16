// The tiled Cholesky of cholesky.hpp on the ranks of an MPI job (versa::mpi): the tiles of the
// lower triangle are distributed 2-D block-cyclic, every rank submits the same factorisation,
// each task runs on the owner of the tile it writes and the tiles it reads travel as the data
// versions say. A rank makes and holds only the tiles it owns, and drops its copies of each
// column once its step is submitted. With --check, rank 0 gathers the factor and compares L L^T
// with the matrix.
//   mpirun -n 4 cholesky_mpi --n 2048 --tile 256 --check
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cholesky.hpp"
#include "command_line.hpp"
#include "distributed_report.hpp"
#include "options.hpp"
#include "owned_tiles.hpp"
#include "versa/mpi.hpp"

namespace {

struct Options {
  long n = 2048;
  long tile = 256;
  int workers = 1;
  bool check = false;
};

// The lower triangle's tiles, registered on every rank with their block-cyclic owner: on the
// owner in its OwnedTiles, elsewhere with no memory (the runtime maps a copy when a version
// arrives, and gives it back at a flush).
class DistributedTiles {
 public:
  DistributedTiles(versa::mpi::Runtime& rt, cholesky::OwnedTiles& owned,
                   const versa::mpi::BlockCyclic& grid)
      : tiles_(owned.tile_rows()) {
    handles_.resize(tiles_ * tiles_);
    for (std::size_t j = 0; j < tiles_; ++j)
      for (std::size_t i = j; i < tiles_; ++i) {
        const auto rows = static_cast<std::size_t>(owned.rows(i));
        handles_[i + j * tiles_] =
            rt.tile(owned.data(i, j), rows, static_cast<std::size_t>(owned.rows(j)), rows,
                    grid.owner(i, j), "A(" + std::to_string(i) + "," + std::to_string(j) + ")");
      }
  }
  std::size_t tile_rows() const { return tiles_; }
  const versa::TileHandle<double>& operator()(std::size_t i, std::size_t j) const {
    return handles_[i + j * tiles_];
  }
  // Drops the other ranks' copies of column k (every rank calls it): its last readers are
  // step k's tasks, and a rank that keeps them holds every tile it ever received.
  void flush_column(versa::mpi::Runtime& rt, std::size_t k) const {
    for (std::size_t m = k; m < tiles_; ++m) rt.flush((*this)(m, k));
  }
  // The factor gathered on rank 0 (every rank calls it, after the factorisation's wait_all):
  // the n x n matrix there, with L in its lower triangle; empty elsewhere.
  std::vector<double> gather_on_rank_0(versa::mpi::Runtime& rt, long n, long tile) const {
    for (std::size_t j = 0; j < tiles_; ++j)
      for (std::size_t i = j; i < tiles_; ++i) rt.fetch((*this)(i, j), 0);
    rt.wait_all();
    std::vector<double> factor;
    if (rt.rank() != 0) return factor;
    factor.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
    for (std::size_t j = 0; j < tiles_; ++j)
      for (std::size_t i = j; i < tiles_; ++i) {
        const auto held = rt.local().acquire(versa::read((*this)(i, j)));
        const versa::Tile<const double>& t = held.view();
        cholesky::place_tile(factor.data(), n, tile, i, j, t.data(), t.ld(), t.rows(), t.cols());
      }
    return factor;
  }

 private:
  std::size_t tiles_;
  std::vector<versa::TileHandle<double>> handles_;
};

// Binds the options to `o`.
void add_options(example::OptionParser& parser, Options& o) {
  cholesky::add_matrix_options(parser, o.n, o.tile);
  example::add_rank_workers_option(parser, o.workers);
  cholesky::add_gathered_check_option(parser, o.check);
}

int run(const Options& o) {
  cholesky::use_one_blas_thread();
  versa::Config config;
  config.cpu_workers = o.workers;
  config.pin_workers = false;
  config.quiet = true;
  versa::mpi::Runtime rt(config);
  const versa::mpi::BlockCyclic grid = versa::mpi::BlockCyclic::for_ranks(rt.size());
  cholesky::OwnedTiles owned(o.n, o.tile, rt.rank(),
                             [&](std::size_t i, std::size_t j) { return grid.owner(i, j); });
  int status = 0;
  {
    const DistributedTiles tiles(rt, owned, grid);
    cholesky::Schedule schedule;
    schedule.after_step = [&](int k) { tiles.flush_column(rt, static_cast<std::size_t>(k)); };
    rt.wait_all();  // every rank has registered before the clock starts
    const auto start = std::chrono::steady_clock::now();
    cholesky::submit_factorisation(rt, tiles, {}, schedule);
    rt.wait_all();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const versa::mpi::Statistics s = rt.statistics();
    std::printf(
        "rank %d: %llu of %llu tasks, %llu messages sent (%.1f MiB), %llu received; "
        "%.1f MiB of tiles owned, %.1f MiB resident at most\n",
        rt.rank(), static_cast<unsigned long long>(s.tasks_executed),
        static_cast<unsigned long long>(s.tasks_submitted),
        static_cast<unsigned long long>(s.messages_sent),
        static_cast<double>(s.bytes_sent) / (1 << 20),
        static_cast<unsigned long long>(s.messages_received),
        static_cast<double>(owned.bytes()) / (1 << 20), cholesky::peak_resident_mib());
    std::vector<double> factor;
    if (o.check) factor = tiles.gather_on_rank_0(rt, o.n, o.tile);
    if (rt.rank() == 0) {
      const std::vector<double> original =
          o.check ? cholesky::spd_matrix<double>(o.n) : std::vector<double>{};
      status = cholesky::report_distributed("versa", o.n, o.tile, rt.size(), o.workers,
                                            std::to_string(o.workers) + " workers", seconds,
                                            o.check, original.data(), factor.data());
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return example::tool_main<Options>(
      argc, argv, "cholesky_mpi",
      "Factors a random SPD matrix with the tiled Cholesky on the ranks of an MPI job.",
      add_options, run);
}
