// The tiled Cholesky of cholesky.hpp on the ranks of an MPI job (versa::mpi): the tiles of the
// lower triangle are distributed 2-D block-cyclic, every rank submits the same factorisation,
// each task runs on the owner of the tile it writes and the tiles it reads travel as the data
// versions say. A rank makes and holds only the tiles it owns, and drops its copies of each
// column once its step is submitted. With --check, rank 0 gathers the factor and compares L L^T
// with the matrix. Each rank uses the devices --devices names (by default the CPU and the GPUs
// it sees: give each rank its own with CUDA_VISIBLE_DEVICES).
//   mpirun -n 4 cholesky_mpi --n 2048 --tile 256 --check
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cholesky.hpp"
#include "command_line.hpp"
#include "distributed_report.hpp"
#include "distributed_tiles.hpp"
#include "options.hpp"
#include "run_report.hpp"
#include "versa/mpi.hpp"

namespace {

struct Options {
  long n = 2048;
  long tile = 256;
  int workers = 1;
  example::Devices devices;
  long device_memory_mib = 0;
  bool check = false;
  cholesky::PanelSolve solve = cholesky::PanelSolve::trsm;
};

// Binds the options to `o`.
void add_options(example::OptionParser& parser, Options& o) {
  cholesky::add_matrix_options(parser, o.n, o.tile);
  example::add_rank_workers_option(parser, o.workers);
  example::add_devices_option(parser, o.devices);
  example::add_device_memory_option(parser, o.device_memory_mib, o.devices,
                                    "cap each device's memory at M MiB, on every rank");
  cholesky::add_gathered_check_option(parser, o.check);
  cholesky::add_panel_solve_option(parser, o.solve);
}

int run(const Options& o) {
  cholesky::use_one_blas_thread();
  versa::Config config = example::runtime_config(o.devices, o.workers, "");
  config.pin_workers = false;
  config.device_memory_limit = static_cast<std::size_t>(o.device_memory_mib) << 20;
  versa::mpi::Runtime rt(config);
  example::check_devices(rt.local(), o.devices);
  if (rt.rank() == 0) std::fprintf(stderr, "%s\n", rt.local().topology_summary().c_str());
  const versa::mpi::BlockCyclic grid = versa::mpi::BlockCyclic::for_ranks(rt.size());
  cholesky::OwnedTiles owned(o.n, o.tile, rt.rank(),
                             [&](std::size_t i, std::size_t j) { return grid.owner(i, j); });
  int status = 0;
  {
    const cholesky::DistributedTiles tiles(rt, owned, grid);
    rt.wait_all();  // every rank has registered before the clock starts
    const auto start = std::chrono::steady_clock::now();
    cholesky::submit_distributed_factorisation(rt, tiles, o.solve);
    rt.wait_all();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const versa::mpi::Statistics s = rt.statistics();
    const std::vector<versa::DeviceStatistics> devices = rt.local().statistics();
    std::uint64_t on_devices = 0, evictions = 0;
    for (std::size_t d = 1; d < devices.size(); ++d) {
      on_devices += devices[d].tasks;
      evictions += devices[d].evictions;
    }
    std::printf(
        "rank %d: %llu of %llu tasks (%llu of them on its devices, %llu evictions), "
        "%llu messages sent (%.1f MiB), %llu received; "
        "%.1f MiB of tiles owned, %.1f MiB resident at most\n",
        rt.rank(), static_cast<unsigned long long>(s.tasks_executed),
        static_cast<unsigned long long>(s.tasks_submitted),
        static_cast<unsigned long long>(on_devices), static_cast<unsigned long long>(evictions),
        static_cast<unsigned long long>(s.messages_sent),
        static_cast<double>(s.bytes_sent) / (1 << 20),
        static_cast<unsigned long long>(s.messages_received),
        static_cast<double>(owned.bytes()) / (1 << 20), cholesky::peak_resident_mib());
    std::vector<double> factor;
    if (o.check) factor = tiles.gather_on_rank_0(rt, o.n, o.tile);
    if (rt.rank() == 0) {
      const cholesky::MatrixElements<double> original =
          o.check ? cholesky::spd_matrix<double>(o.n) : cholesky::MatrixElements<double>{};
      const std::string used = example::devices_used(devices, '+');
      status = cholesky::report_distributed(
          "versa", o.n, o.tile, rt.size(), o.workers,
          std::to_string(o.workers) + " workers" + (used == "cpu" ? "" : ", " + used), seconds,
          o.check, original.data(), factor.data(), used == "cpu" ? "" : ",devices=" + used);
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
