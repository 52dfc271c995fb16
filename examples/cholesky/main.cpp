// Command-line tool: factor a random symmetric positive definite matrix with the tiled Cholesky
// of cholesky.hpp and report time, GFLOP/s, tasks and kernel time per kernel and device (the
// runtime's task statistics) and, with --check, the residual.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cholesky.hpp"
#include "command_line.hpp"
#include "options.hpp"
#include "result_line.hpp"
#include "run_report.hpp"

namespace {

struct Options {
  long n = 4096;
  long tile = 512;
  example::Devices devices;
  long device_memory_mib = 0;
  int workers = 0;
  cholesky::Placements place;
  int repeat = 1;
  bool check = false;
  bool single = false;
  bool home_at_end = false;
  cholesky::Priorities priorities = cholesky::Priorities::critical_path;
  cholesky::PanelSolve solve = cholesky::PanelSolve::trsm;
  std::string trace;
};

// Binds the options to `o`; the checks that relate two options run once all are read.
void add_options(example::OptionParser& parser, Options& o) {
  cholesky::add_matrix_options(parser, o.n, o.tile);
  example::add_devices_option(parser, o.devices);
  example::add_device_memory_option(parser, o.device_memory_mib, o.devices,
                                    "cap each device's memory at M MiB (to factor out of core)");
  example::add_workers_option(parser, o.workers);
  example::add_parsed_option(
      parser, "--place", o.place, cholesky::parse_placements,
      "placement per kernel, e.g. potrf=cpu,gemm=auto\n(cpu, gpu, prefer_gpu, auto)")
      .type_name("SPEC");
  example::add_repeat_option(parser, o.repeat, "factor R times");
  parser.flag("--check", o.check,
              "compute ||A - L L^T||_F / (||A||_F n eps) and say whether it passes");
  parser.flag("--float", o.single, "single precision instead of double");
  parser.flag("--home-at-end", o.home_at_end,
              "with devices, copy the tiles home all at the end (wait_all) instead of\n"
              "each as soon as it is final");
  example::add_parsed_option(parser, "--priorities", o.priorities, cholesky::parse_priorities,
                             "which ready tasks go first: critical_path (default: the next\n"
                             "panel's), wavefront (the tiles nearest the top left, across steps),\n"
                             "panel (the whole panel's)")
      .type_name("SCHEME");
  cholesky::add_panel_solve_option(parser, o.solve);
  example::add_trace_option(parser, o.trace, "all repetitions");
  parser.validate([&o] {
    if (o.tile > o.n)
      throw example::OptionError(
          "--tile", std::to_string(o.tile) + " is larger than --n " + std::to_string(o.n));
    for (const auto& [kernel, rule] : o.place)
      if (rule == versa::Placement::gpu_only && !o.devices.accelerators())
        throw example::OptionError("--place", kernel + "=gpu, but --devices " + o.devices.list +
                                                  " has no GPU or emulated device");
  });
}

template <class T>
int run(const Options& o) {
  cholesky::use_one_blas_thread();
  const cholesky::MatrixElements<T> original = cholesky::spd_matrix<T>(o.n);
  cholesky::MatrixElements<T> a;
  std::vector<double> seconds;
  int workers = 0;
  std::vector<versa::DeviceStatistics> devices;
  std::vector<versa::TaskStatistics> tasks;
  versa::Config config = example::runtime_config(o.devices, o.workers, o.trace);
  config.device_memory_limit = static_cast<std::size_t>(o.device_memory_mib) << 20;
  config.task_statistics = true;
  // One runtime for every repetition: its performance model calibrates on the first.
  versa::Runtime rt{config};
  example::announce(rt, o.devices);
  workers = rt.cpu_workers();
  // With devices, each tile is copied home once final, beside the later kernels (see
  // cholesky::Schedule), unless --home-at-end asks for the copies at wait_all.
  const cholesky::Schedule schedule{o.priorities, rt.device_count() > 0 && !o.home_at_end};
  for (int rep = 0; rep < o.repeat; ++rep) {
    cholesky::copy_matrix(original, a);
    const auto before = rt.statistics();
    const auto tasks_before = rt.task_statistics();
    versa::TiledMatrix<T> tiles(rt, a.data(), o.n, o.n, o.n, o.tile);
    const auto start = std::chrono::steady_clock::now();
    cholesky::submit_factorisation(rt, tiles, o.solve, o.place, schedule);
    try {
      rt.wait_all();
    } catch (const versa::TaskFailure& failure) {
      std::fprintf(stderr, "cholesky: factorisation failed: %s\n", failure.what());
      return 1;
    }
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    devices = example::statistics_since(rt, before);
    tasks = example::task_statistics_since(rt, tasks_before);
  }
  const double seconds_of_last_run = seconds.back();
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const double gflops = static_cast<double>(o.n) * o.n * o.n / 3.0 / median * 1e-9;
  const std::size_t nt = static_cast<std::size_t>((o.n + o.tile - 1) / o.tile);
  const cholesky::TaskCounts counts = cholesky::task_counts(nt, o.solve);
  std::printf("matrix      %ld x %ld %s, tiles of %ld (%zu x %zu tiles)\n", o.n, o.n,
              o.single ? "float" : "double", o.tile, nt, nt);
  example::print_devices(workers, devices);
  if (o.device_memory_mib > 0)
    std::printf(" (device memory capped at %ld MiB)", o.device_memory_mib);
  std::printf("\n");
  std::printf("time        %.4f s (median of %d)\n", median, o.repeat);
  std::printf("performance %.2f GFLOP/s (n^3/3 flops)\n", gflops);
  // The kernels this solve runs, with their task counts.
  std::vector<example::Kernel> kernels;
  std::string per_kernel;
  for (int kernel = 0; kernel < static_cast<int>(std::size(cholesky::kernels)); ++kernel) {
    if (counts[kernel] == 0) continue;
    const char* name = cholesky::kernels[kernel];
    per_kernel +=
        (per_kernel.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(counts[kernel]);
    kernels.push_back({name, name});
  }
  std::printf("tasks       %s (total %zu), last run:\n", per_kernel.c_str(), counts.total());
  example::print_tasks_per_kind(tasks, kernels);
  example::print_kernel_times(tasks, kernels, workers, seconds_of_last_run);
  example::print_transfers(devices);
  int status = 0;
  if (o.check) {
    const double residual =
        cholesky::scaled_residual(original.data(), a.data(), static_cast<std::size_t>(o.n));
    const bool pass = residual < 10.0;
    std::printf("residual    %.3g (||A - L L^T||_F / (||A||_F n eps)): %s\n", residual,
                pass ? "PASS" : "FAIL");
    status = pass ? 0 : 1;
  }
  const std::string used = example::devices_used(devices, ',');
  example::print_result(
      "cholesky", "versa",
      "n=" + std::to_string(o.n) + ",tile=" + std::to_string(o.tile) + ",devices=" + used +
          (o.home_at_end && rt.device_count() > 0 ? ",home=at_end" : "") +
          cholesky::priorities_parameter(o.priorities) +
          (o.solve == cholesky::PanelSolve::inverse ? ",solve=inverse" : "") +
          example::cuda_settings(config, devices) + (o.trace.empty() ? "" : ",traced"),
      "gflops", gflops, "GFLOP/s");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return example::tool_main<Options>(
      argc, argv, "cholesky",
      "Factors a random symmetric positive definite n x n matrix as L L^T with a tiled algorithm.",
      add_options, [](const Options& o) { return o.single ? run<float>(o) : run<double>(o); });
}
