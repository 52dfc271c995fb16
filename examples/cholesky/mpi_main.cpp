// The tiled Cholesky of cholesky.hpp on the ranks of an MPI job (versa::mpi): the tiles of the
// lower triangle are distributed 2-D block-cyclic, every rank submits the same factorisation,
// each task runs on the owner of the tile it writes and the tiles it reads travel as the data
// versions say. With --check, rank 0 gathers the factor and compares L L^T with the matrix.
//   mpirun -n 4 cholesky_mpi --n 2048 --tile 256 --check
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cholesky.hpp"
#include "command_line.hpp"
#include "distributed_report.hpp"
#include "options.hpp"
#include "versa/mpi.hpp"

namespace {

struct Options {
  long n = 2048;
  long tile = 256;
  int workers = 1;
  bool check = false;
};

// The lower triangle's tiles, registered on every rank with their block-cyclic owner. Every
// rank keeps the whole matrix in this example (the tiles it does not own receive copies).
class DistributedTiles {
 public:
  DistributedTiles(versa::mpi::Runtime& rt, double* a, std::size_t n, std::size_t tile)
      : tiles_((n + tile - 1) / tile) {
    const versa::mpi::BlockCyclic grid = versa::mpi::BlockCyclic::for_ranks(rt.size());
    handles_.resize(tiles_ * tiles_);
    for (std::size_t j = 0; j < tiles_; ++j)
      for (std::size_t i = j; i < tiles_; ++i)
        handles_[i + j * tiles_] = rt.tile(
            a + i * tile + j * tile * n, std::min(tile, n - i * tile), std::min(tile, n - j * tile),
            n, grid.owner(i, j), "A(" + std::to_string(i) + "," + std::to_string(j) + ")");
  }
  std::size_t tile_rows() const { return tiles_; }
  const versa::TileHandle<double>& operator()(std::size_t i, std::size_t j) const {
    return handles_[i + j * tiles_];
  }
  // Gathers every tile on `rank` (every rank calls it).
  void fetch_all(versa::mpi::Runtime& rt, int rank) const {
    for (std::size_t j = 0; j < tiles_; ++j)
      for (std::size_t i = j; i < tiles_; ++i) rt.fetch(handles_[i + j * tiles_], rank);
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
  const std::vector<double> original = cholesky::spd_matrix<double>(o.n);
  std::vector<double> a = original;
  const auto n = static_cast<std::size_t>(o.n);
  int status = 0;
  {
    DistributedTiles tiles(rt, a.data(), n, static_cast<std::size_t>(o.tile));
    rt.wait_all();  // every rank has registered before the clock starts
    const auto start = std::chrono::steady_clock::now();
    cholesky::submit_factorisation(rt, tiles);
    rt.wait_all();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const versa::mpi::Statistics s = rt.statistics();
    std::printf("rank %d: %llu of %llu tasks, %llu messages sent (%.1f MiB), %llu received\n",
                rt.rank(), static_cast<unsigned long long>(s.tasks_executed),
                static_cast<unsigned long long>(s.tasks_submitted),
                static_cast<unsigned long long>(s.messages_sent),
                static_cast<double>(s.bytes_sent) / (1 << 20),
                static_cast<unsigned long long>(s.messages_received));
    if (o.check) {
      tiles.fetch_all(rt, 0);
      rt.wait_all();
    }
    if (rt.rank() == 0)
      status = cholesky::report_distributed("versa", o.n, o.tile, rt.size(), o.workers,
                                            std::to_string(o.workers) + " workers", seconds,
                                            o.check, original.data(), a.data());
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
