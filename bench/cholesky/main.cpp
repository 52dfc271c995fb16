// The tiled Cholesky comparison: Versa (examples/cholesky), StarPU with the same tile kernels
// (schedulers lws, dmda and dmdas), and one multithreaded LAPACKE_dpotrf from OpenBLAS, on the same
// matrix in the same process.
//
//   versa-bench-cholesky [--reps N] [--sizes 2048,4096] [--tiles 256,512] [--gpu | --gpu-only]
//                        [--solve trsm|inverse] [--starpu-streams N] [--trace-prefix PREFIX]
//                        [--priorities SCHEME] [--systems LIST]
//
// --solve inverse has the tiled systems, Versa and StarPU, solve each step's panel through
// L(k,k)^-1 (cholesky::PanelSolve: one trtri, then one trmm per tile, in place of one trsm per
// tile), and their RESULT lines say ",solve=inverse"; the dense peers are one call either way.
// --priorities sets Versa's schedule (cholesky::Priorities; its RESULT lines then say which),
// the StarPU peer keeping the priorities of StarPU's own Cholesky.
//
// With --gpu (and a GPU present) a second table compares Versa on CPU + GPU with StarPU's dmda,
// dmdas and dmdar (dmda whose workers take first the tasks whose data they hold, as Versa's
// device worker does) on CPU + GPU (when StarPU was built with CUDA: scripts/build-starpu-cuda)
// and cuSOLVER's dense dpotrf on the whole matrix (copies included for all); --gpu-only prints
// that table alone. StarPU drives a GPU with one CUDA worker, one stream, unless
// --starpu-streams N gives it N (STARPU_NWORKER_PER_CUDA: its concurrent kernels, as Versa's
// streams, VERSA_CUDA_STREAMS, default 4); its systems are then named starpu-dmda-Nstreams.
//
// Each figure is the median GFLOP/s (n^3/3 flops) of N runs (default 3) after a warm-up run
// (which also calibrates the models of StarPU's dm* schedulers); every system's first result is
// checked against the original matrix (cholesky::scaled_residual_estimate below 10: O(n^2), so that
// n = 30000 checks in seconds). A second table gives, for Versa and StarPU, the median share of the
// workers' time spent inside tile kernels: what the schedule leaves idle, apart from the
// kernels' own speed. Versa's kernel time is that of its task statistics (Config::task_statistics)
// on the CPU; StarPU's, a clock around each kernel call. --trace-prefix traces one more run of
// each tiled system, so that scripts/trace-compare reads Versa's schedule beside StarPU's.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cholesky.hpp"
#include "cholesky/peers.hpp"
#include "command_line.hpp"
#include "common/harness.hpp"
#include "run_report.hpp"

namespace {

bench::TiledTiming versa_cholesky(int workers, double* a, int n, int tile,
                                  cholesky::PanelSolve solve, cholesky::Priorities priorities,
                                  bool gpu = false, const std::string& trace_file = {}) {
  cholesky::use_one_blas_thread();
  versa::Config config;
  config.cpu_workers = workers;
  config.gpus = gpu ? -1 : 0;
  config.quiet = true;
  config.task_statistics = true;
  config.trace_file = trace_file;
  // The warm-up run calibrates the placement model; later runs load it.
  if (gpu)
    config.perf_model_file = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                             "/versa-bench-cholesky.model";
  versa::Runtime rt{config};
  versa::TiledMatrix<double> tiles(rt, a, n, n, n, tile);
  const std::vector<versa::TaskStatistics> before = rt.task_statistics();
  const auto start = bench::Clock::now();
  // With a GPU, each tile is asked home once final, as the StarPU peer does (starpu.cpp).
  const cholesky::Schedule schedule{.priorities = priorities, .home_when_final = gpu};
  cholesky::submit_factorisation(rt, tiles, solve, {}, schedule);
  rt.wait_all();
  const double seconds = bench::seconds_since(start);
  // With a GPU the CPU bodies are only part of the work: no kernel share then.
  if (gpu) return {seconds};
  bench::TiledTiming timing{seconds, 0, 0, 0};
  for (const versa::TaskStatistics& t : example::task_statistics_since(rt, before)) {
    if (t.device_kind != "cpu") continue;
    timing.kernel_seconds += t.kernel_seconds;
    if (t.task_type == "gemm") {
      timing.gemm_seconds += t.kernel_seconds;
      timing.gemms += static_cast<std::int64_t>(t.tasks);
    }
  }
  return timing;
}

struct Candidate {
  std::string system;
  int tile;  // 0: not tiled
  // Factors the matrix; a tiled system writes its trace to the file when one is named.
  std::function<bench::TiledTiming(double*, const std::string& trace_file)> run;
  // Settings its RESULT lines name after the devices (",solve=inverse,memory_pool=off"): runs
  // under other settings must not share a key.
  std::string settings = {};
};

// Runs every candidate of each size (a warm-up that checks the factor, then `reps` measured runs,
// systems taking turns) and prints the table and the RESULT lines; then, for the tiled systems
// that time their kernels, the share of the `workers` workers' time spent in kernels. With a
// `trace_prefix`, each tiled system then factors once more, untimed, writing its trace to
// <prefix>-<devices>-<system>-<n>-<tile>.json (devices "cpu" or "cpu+gpu"). A non-empty `only`
// keeps the systems it names. Returns non-zero when a
// factor is wrong.
template <class Candidates>
int run_table(const std::string& devices, const std::vector<std::string>& systems,
              const std::vector<int>& sizes, const std::vector<int>& tiles, int reps, int workers,
              const std::string& trace_prefix, const std::vector<std::string>& only,
              Candidates make_candidates) {
  // Medians of a tiled system's kernel figures: the share of its workers' time in kernels and
  // the mean time of a gemm.
  struct KernelFigures {
    int n, tile;
    std::string system, settings;
    double share, gemm_us;
  };
  std::vector<KernelFigures> figures;
  std::printf("\n## cholesky: GFLOP/s, devices=%s\n%-8s %-6s", devices.c_str(), "n", "tile");
  for (const std::string& system : systems) std::printf(" %12s", system.c_str());
  std::printf("\n");
  for (int n : sizes) {
    const cholesky::MatrixElements<double> original = cholesky::spd_matrix<double>(n);
    std::vector<Candidate> candidates = make_candidates(n);
    std::erase_if(candidates, [&](const Candidate& c) {
      return !only.empty() && std::find(only.begin(), only.end(), c.system) == only.end();
    });
    std::vector<std::vector<double>> gflops(candidates.size()), share(candidates.size()),
        gemm_us(candidates.size());
    cholesky::MatrixElements<double> a;
    for (int rep = -1; rep < reps; ++rep) {
      for (std::size_t c = 0; c < candidates.size(); ++c) {
        cholesky::copy_matrix(original, a);
        const bench::TiledTiming timing = candidates[c].run(a.data(), {});
        const double seconds = timing.seconds;
        if (rep < 0) {
          const double residual = cholesky::scaled_residual_estimate(original.data(), a.data(),
                                                                     static_cast<std::size_t>(n));
          if (!(residual < 10.0)) {
            std::fprintf(stderr, "%s n=%d tile=%d: wrong factor (scaled residual %g)\n",
                         candidates[c].system.c_str(), n, candidates[c].tile, residual);
            return 1;
          }
          continue;
        }
        gflops[c].push_back(static_cast<double>(n) * n * n / 3.0 / seconds * 1e-9);
        share[c].push_back(timing.kernel_seconds / (workers * seconds));
        gemm_us[c].push_back(timing.gemm_seconds / static_cast<double>(timing.gemms) * 1e6);
      }
    }
    for (std::size_t c = 0; c < candidates.size() && !trace_prefix.empty(); ++c) {
      if (candidates[c].tile == 0) continue;
      std::string where = devices;
      std::replace(where.begin(), where.end(), ',', '+');
      const std::string file = trace_prefix + "-" + where + "-" + candidates[c].system + "-" +
                               std::to_string(n) + "-" + std::to_string(candidates[c].tile) +
                               ".json";
      cholesky::copy_matrix(original, a);
      candidates[c].run(a.data(), file);
      std::printf("# trace of %s: %s\n", candidates[c].system.c_str(), file.c_str());
    }
    // Untiled systems (tile 0) appear on every row.
    auto median_of = [&](const std::string& system, int tile) {
      for (std::size_t c = 0; c < candidates.size(); ++c)
        if (candidates[c].system == system &&
            (candidates[c].tile == tile || candidates[c].tile == 0))
          return bench::median(gflops[c]);
      return std::nan("");
    };
    for (int tile : tiles) {
      std::printf("%-8d %-6d", n, tile);
      for (const std::string& system : systems) std::printf(" %12.2f", median_of(system, tile));
      std::printf("\n");
    }
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const std::string tile = candidates[c].tile ? std::to_string(candidates[c].tile) : "full";
      bench::print_result("cholesky", candidates[c].system,
                          "n=" + std::to_string(n) + ",tile=" + tile + ",devices=" + devices +
                              candidates[c].settings,
                          "gflops", bench::median(gflops[c]), "GFLOP/s");
      if (!std::isnan(share[c][0]))
        figures.push_back({n, candidates[c].tile, candidates[c].system, candidates[c].settings,
                           bench::median(share[c]), bench::median(gemm_us[c])});
    }
  }
  if (figures.empty()) return 0;
  std::vector<std::string> timed;
  for (const std::string& system : systems)
    if (std::any_of(figures.begin(), figures.end(),
                    [&](const KernelFigures& f) { return f.system == system; }))
      timed.push_back(system);
  // One table and its RESULT lines per figure.
  auto print_figure = [&](const std::string& title, const char* metric, const char* unit,
                          double KernelFigures::*field) {
    std::printf("\n## cholesky: %s, devices=%s\n%-8s %-6s", title.c_str(), devices.c_str(), "n",
                "tile");
    for (const std::string& system : timed) std::printf(" %12s", system.c_str());
    std::printf("\n");
    for (int n : sizes)
      for (int tile : tiles) {
        std::printf("%-8d %-6d", n, tile);
        for (const std::string& system : timed) {
          double value = std::nan("");
          for (const KernelFigures& f : figures)
            if (f.n == n && f.tile == tile && f.system == system) value = f.*field;
          std::printf(" %12.3f", value);
        }
        std::printf("\n");
      }
    for (const KernelFigures& f : figures)
      bench::print_result("cholesky", f.system,
                          "n=" + std::to_string(f.n) + ",tile=" + std::to_string(f.tile) +
                              ",devices=" + devices + f.settings,
                          metric, f.*field, unit);
  };
  print_figure("share of the " + std::to_string(workers) +
                   " workers' time spent in tile kernels, kernel time / (workers x wall)",
               "kernel_share", "fraction", &KernelFigures::share);
  print_figure("mean time of a gemm in microseconds", "gemm_us", "us", &KernelFigures::gemm_us);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Every system of this process shares the GPU's one CUDA context, whose hardware queues the
  // first to use CUDA fixes: all get the 32 Versa's runtime asks for (the number of streams each
  // may use without sharing a queue), whichever runs first, unless the environment says.
  ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  int reps = 3;
  bool gpu = false, gpu_only = false;
  std::vector<int> sizes{2048, 4096, 8192}, tiles{256, 512};
  example::OptionParser parser{
      "versa-bench-cholesky",
      "The tiled Cholesky (GFLOP/s) of Versa against StarPU and OpenBLAS's dpotrf, and with\n"
      "--gpu against cuSOLVER's dpotrf."};
  example::add_positive_option(parser, "--reps", reps, "N",
                               "measured runs per figure (their median), after a warm-up");
  // One value per --sizes or --tiles, split at commas: a later word is not taken for a size.
  example::add_positive_list_option(parser, "--sizes", sizes, "LIST",
                                    "matrix sizes, comma-separated")
      .one_item_per_use()
      .default_text("2048,4096,8192");
  example::add_positive_list_option(parser, "--tiles", tiles, "LIST", "tile sizes, comma-separated")
      .one_item_per_use()
      .default_text("256,512");
  parser.flag("--gpu", gpu, "also compare Versa on CPU + GPU with cuSOLVER (needs a GPU)");
  parser.flag("--gpu-only", gpu_only, "only the CPU + GPU comparison");
  int starpu_streams = 1;
  example::add_positive_option(parser, "--starpu-streams", starpu_streams, "N",
                               "StarPU's CUDA workers per GPU, each with its stream "
                               "(STARPU_NWORKER_PER_CUDA)");
  std::string trace_prefix;
  parser.option(
      "--trace-prefix", trace_prefix,
      "after the measured runs, trace one more run of each tiled system to "
      "PREFIX-<cpu|cpu+gpu>-<system>-<n>-<tile>.json (Versa's trace; StarPU's tasks from its "
      "profiling)");
  cholesky::PanelSolve solve = cholesky::PanelSolve::trsm;
  example::add_parsed_option(parser, "--solve", solve, cholesky::parse_panel_solve,
                             "how the tiled systems solve each panel against its diagonal tile:\n"
                             "trsm (default), inverse (the tile inverted once by trtri, then\n"
                             "one trmm per tile)")
      .type_name("HOW");
  cholesky::Priorities priorities = cholesky::Priorities::critical_path;
  example::add_parsed_option(parser, "--priorities", priorities, cholesky::parse_priorities,
                             "Versa's priorities, as the cholesky tool's (critical_path,\n"
                             "wavefront, panel); the StarPU peer keeps its own")
      .type_name("SCHEME");
  std::vector<std::string> only;
  parser
      .option("--systems", only,
              "only these systems, comma-separated (versa, starpu-dmda, cusolver, ...)")
      .comma_separated()
      .one_item_per_use();
  if (const std::optional<int> status = parser.parse(argc, argv)) return *status;
  // Read by StarPU at each starpu_init.
  if (starpu_streams > 1)
    ::setenv("STARPU_NWORKER_PER_CUDA", std::to_string(starpu_streams).c_str(), 1);
  const bool cpu_table = !gpu_only;
  gpu = gpu || gpu_only;
  const int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("# median of %d runs after a warm-up, %d CPU workers, GFLOP/s = n^3/3 / time\n", reps,
              workers);
  const bool inverse = solve == cholesky::PanelSolve::inverse;
  if (inverse) std::printf("# tiled systems: panels solved through L(k,k)^-1 (--solve inverse)\n");
  // What the tiled systems' RESULT lines add to their settings; nothing for trsm, so that its
  // results keep the names they had before --solve.
  const std::string solve_setting = inverse ? ",solve=inverse" : "";
  const std::string priorities_setting = cholesky::priorities_parameter(priorities);
  if (gpu && !bench::cusolver_available())
    return example::wrong_call(parser.name(), "--gpu: no GPU can be used here");
  // CPU only: Versa, StarPU (lws, dmda, dmdas: the last sorts each worker's queue by priority)
  // and multithreaded OpenBLAS.
  auto cpu_candidates = [&](int n) {
    std::vector<Candidate> candidates;
    for (int tile : tiles) {
      candidates.push_back({"versa", tile,
                            [=](double* a, const std::string& trace) {
                              return versa_cholesky(workers, a, n, tile, solve, priorities, false,
                                                    trace);
                            },
                            solve_setting + priorities_setting});
      if (bench::starpu_available()) {
        candidates.push_back({"starpu-lws", tile,
                              [=](double* a, const std::string& trace) {
                                return bench::cholesky_starpu("lws", workers, a, n, tile, solve,
                                                              false, trace);
                              },
                              solve_setting});
        candidates.push_back({"starpu-dmda", tile,
                              [=](double* a, const std::string& trace) {
                                return bench::cholesky_starpu("dmda", workers, a, n, tile, solve,
                                                              false, trace);
                              },
                              solve_setting});
        candidates.push_back({"starpu-dmdas", tile,
                              [=](double* a, const std::string& trace) {
                                return bench::cholesky_starpu("dmdas", workers, a, n, tile, solve,
                                                              false, trace);
                              },
                              solve_setting});
      }
    }
    candidates.push_back({"openblas", 0, [=](double* a, const std::string&) {
                            return bench::TiledTiming{bench::cholesky_openblas(a, n)};
                          }});
    return candidates;
  };
  // CPU + GPU: Versa and StarPU (one core drives the GPU) against cuSOLVER on the whole matrix.
  const std::string streams =
      starpu_streams > 1 ? "-" + std::to_string(starpu_streams) + "streams" : "";
  // The CUDA settings the environment changed (VERSA_CUDA_MEMORY_POOL=0, ...), as the cholesky
  // tool names them.
  std::vector<versa::DeviceStatistics> on_a_gpu(1);
  on_a_gpu[0].name = "cuda";
  const std::string versa_settings = example::cuda_settings(versa::Config{}, on_a_gpu);
  auto gpu_candidates = [&](int n) {
    std::vector<Candidate> candidates;
    const int cpu_workers = std::max(1, workers - 1);
    for (int tile : tiles) {
      candidates.push_back({"versa", tile,
                            [=](double* a, const std::string& trace) {
                              return versa_cholesky(cpu_workers, a, n, tile, solve, priorities,
                                                    true, trace);
                            },
                            solve_setting + priorities_setting + versa_settings});
      if (bench::starpu_gpu_available())
        for (const char* scheduler : {"dmda", "dmdas", "dmdar"})
          candidates.push_back({"starpu-" + std::string(scheduler) + streams, tile,
                                [=](double* a, const std::string& trace) {
                                  return bench::cholesky_starpu(scheduler, cpu_workers, a, n, tile,
                                                                solve, true, trace);
                                },
                                solve_setting});
    }
    candidates.push_back({"cusolver", 0, [=](double* a, const std::string&) {
                            return bench::TiledTiming{bench::cholesky_cusolver(a, n)};
                          }});
    return candidates;
  };
  if (cpu_table &&
      run_table("cpu", {"versa", "starpu-lws", "starpu-dmda", "starpu-dmdas", "openblas"}, sizes,
                tiles, reps, workers, trace_prefix, only, cpu_candidates) != 0)
    return 1;
  if (gpu && run_table("cpu,gpu",
                       {"versa", "starpu-dmda" + streams, "starpu-dmdas" + streams,
                        "starpu-dmdar" + streams, "cusolver"},
                       sizes, tiles, reps, workers, trace_prefix, only, gpu_candidates) != 0)
    return 1;
  return 0;
}
