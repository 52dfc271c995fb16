// What peer links between devices buy: the tiled Cholesky on 2 CPU workers and 2 emulated
// devices, each holding a quarter of the matrix (so tiles move between them), with modelled host
// links of 12 GB/s, with a modelled peer link of 50 GB/s between the devices and without one
// (then a tile moves device to host to device).
//
//   versa-bench-devices-peer [--reps N] [--n N] [--tile B]
//
// The two settings take turns, N repetitions each, every factor checked
// (cholesky::scaled_residual_estimate < 10): the median seconds, and the bytes of the repetition
// with the median host-link bytes: across the host links (to and from the devices) and over the
// peer link.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cholesky.hpp"
#include "command_line.hpp"
#include "common/harness.hpp"

namespace {

struct Run {
  double seconds = 0;
  std::uint64_t host_link_bytes = 0;
  std::uint64_t peer_link_bytes = 0;
  // Where the host-link bytes went, and why they moved: what the placement left to the CPU
  // workers, and the evictions that wrote tiles home.
  std::uint64_t to_devices = 0;
  std::uint64_t to_host = 0;
  std::uint64_t evictions = 0;
  std::uint64_t cpu_tasks = 0;
  bool correct = false;
};

Run factor(bool peer, int n, int tile, const cholesky::MatrixElements<double>& original) {
  versa::Config config;
  config.cpu_workers = 2;
  config.gpus = 0;
  config.quiet = true;
  config.emulated_devices.resize(2);
  const std::size_t matrix_bytes = static_cast<std::size_t>(n) * n * sizeof(double);
  for (versa::EmulatedDeviceConfig& device : config.emulated_devices) {
    device.memory_bytes = matrix_bytes / 4;
    device.bandwidth_bytes_per_s = 12e9;
    device.peer_link = peer;
    device.peer_bandwidth_bytes_per_s = 50e9;
  }
  cholesky::MatrixElements<double> a = original;
  Run run;
  {
    versa::Runtime rt{config};
    versa::TiledMatrix<double> tiles(rt, a.data(), n, n, n, tile);
    const auto start = bench::Clock::now();
    cholesky::submit_factorisation(rt, tiles);
    rt.wait_all();
    run.seconds = bench::seconds_since(start);
    const std::vector<versa::DeviceStatistics> devices = rt.statistics();
    run.cpu_tasks = devices.front().tasks;
    for (const versa::DeviceStatistics& d : devices) {
      run.to_devices += d.bytes_to_device;
      run.to_host += d.bytes_to_host;
      run.peer_link_bytes += d.bytes_from_peers;
      run.evictions += d.evictions;
    }
    run.host_link_bytes = run.to_devices + run.to_host;
  }
  run.correct = cholesky::scaled_residual_estimate(original.data(), a.data(),
                                                   static_cast<std::size_t>(n), 4) < 10.0;
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  int n = 4096;
  int tile = 256;
  example::OptionParser parser{
      "versa-bench-devices-peer",
      "The tiled Cholesky on CPU + 2 emulated devices, with and without peer links."};
  example::add_positive_option(parser, "--reps", reps, "N",
                               "repetitions per setting (their median)");
  example::add_positive_option(parser, "--n", n, "N", "matrix order");
  example::add_positive_option(parser, "--tile", tile, "B", "tile order");
  if (const std::optional<int> status = parser.parse(argc, argv)) return *status;
  cholesky::use_one_blas_thread();
  const cholesky::MatrixElements<double> original = cholesky::spd_matrix<double>(n);
  std::printf(
      "# devices-peer: Cholesky n=%d tile %d on 2 CPU workers + 2 emulated devices of a quarter "
      "of the matrix each; host links 12 GB/s, peer link 50 GB/s; median of %d\n",
      n, tile, reps);
  std::vector<double> seconds[2];
  std::vector<Run> runs[2];
  int status = 0;
  for (int rep = 0; rep < reps; ++rep)
    for (const bool peer : {true, false}) {
      const Run run = factor(peer, n, tile, original);
      if (!run.correct) {
        std::fprintf(stderr, "versa-bench-devices-peer: wrong factor (peer links %s)\n",
                     peer ? "on" : "off");
        status = 1;
      }
      seconds[peer].push_back(run.seconds);
      runs[peer].push_back(run);
    }
  // The repetition with the median host-link bytes stands for its setting (bytes vary with
  // the placement's timing as much as seconds do).
  Run median_run[2];
  for (const bool peer : {true, false}) {
    std::vector<Run>& r = runs[peer];
    std::nth_element(
        r.begin(), r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2), r.end(),
        [](const Run& a, const Run& b) { return a.host_link_bytes < b.host_link_bytes; });
    median_run[peer] = r[r.size() / 2];
  }
  std::printf("%-6s %10s %14s %14s %14s %14s %10s %10s\n", "peer", "seconds", "host-link MiB",
              "to-device MiB", "to-host MiB", "peer-link MiB", "evictions", "CPU tasks");
  constexpr double mib = 1 << 20;
  for (const bool peer : {true, false}) {
    const Run& r = median_run[peer];
    std::printf("%-6s %10.3f %14.1f %14.1f %14.1f %14.1f %10llu %10llu\n", peer ? "on" : "off",
                bench::median(seconds[peer]), static_cast<double>(r.host_link_bytes) / mib,
                static_cast<double>(r.to_devices) / mib, static_cast<double>(r.to_host) / mib,
                static_cast<double>(r.peer_link_bytes) / mib,
                static_cast<unsigned long long>(r.evictions),
                static_cast<unsigned long long>(r.cpu_tasks));
  }
  std::printf("# host-link bytes, peer links on / off: %.2f\n",
              static_cast<double>(median_run[1].host_link_bytes) /
                  static_cast<double>(median_run[0].host_link_bytes));
  for (const bool peer : {true, false}) {
    const std::string param = std::string("peer=") + (peer ? "on" : "off") + ",devices=2";
    bench::print_result("devices-peer", "versa", param, "seconds", bench::median(seconds[peer]),
                        "s");
    bench::print_result("devices-peer", "versa", param, "host_link_bytes",
                        static_cast<double>(median_run[peer].host_link_bytes), "bytes");
    bench::print_result("devices-peer", "versa", param, "peer_link_bytes",
                        static_cast<double>(median_run[peer].peer_link_bytes), "bytes");
  }
  return status;
}
