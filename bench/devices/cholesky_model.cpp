// The tiled Cholesky's schedule on a modelled GPU: where a device's time goes when its tiles
// arrive over a link, tried on a machine without one. One emulated device stands for the GPU:
// its kernels sleep for the time the GPU's take (the flops of a 2048-tile kernel at a rate per
// kernel), its host link is modelled at the GPU's measured pinned bandwidth, and kernels take
// turns on one compute engine; the real tiles are small (64 x 64), so the memcpy under a modelled
// copy costs nothing next to it. Every modelled time is stretched by --scale so that sleeps are
// long against the operating system's timer; the figures are divided back. The kernels are placed
// as `cholesky --devices cpu,gpu` places them: automatically, each kernel having a CPU
// implementation too, a thousand times slower (on the H200 machine a core takes 0.3-1.5 s for
// a 2048 tile's kernel), with the performance model calibrated as a run's first factorisation
// leaves it (a model file); so the ready kernels wait in the placement's pool and the device
// pulls them, and the CPU workers run only the copies home (cholesky::Schedule::
// home_when_final), as on the GPU machine. Schedules marked gpu_only hold every kernel to the
// device instead, which queues them at once in its own queue. The schedule marked cold starts
// without the model file, as a program's first factorisation does: the model learns each
// kernel's times as it goes, on the CPU workers too (--cpu-workers; the GPU machine has 16).
// The schedule marked kept starts from the model file a cold run kept, as a program's later
// runs on a GPU machine do (Config::perf_model_file's default there).
//
//   versa-bench-cholesky-model [--reps N] [--tiles T] [--scale S] [--cpu-workers N] [--only TEXT]
//                              [--gemm-ms G --syrk-ms S --trsm-ms T --potrf-ms P --link-gbs L]
//
// For each schedule (the example's priorities, kernel streams, high-priority streams) it prints the
// median makespan in modelled seconds, the kernels' sum as measured (the sleeps overrun a little)
// and the makespan over the kernels' modelled sum, after the two bounds: that sum (one compute
// engine) and the uploads' (one copy engine each way).
//
// What the model leaves out: kernels of several streams sharing the GPU (they take turns here,
// a kernel of a high-priority stream first when the device has them), and the host code of each
// launch. The default times are estimates for an H200 (cuBLAS DGEMM near 50 of its 67 FP64
// TFLOP/s at 2048, syrk at 35, trsm at 20, cuSOLVER's potrf 1.2 ms as the H200 runs measured);
// they set the balance of compute against copies, which is what the schedules differ on. A GPU's
// own are the kernel times of `cholesky --tile 2048` run with VERSA_CUDA_STREAMS=1
// VERSA_CUDA_PRIORITY_STREAMS=0 (one kernel at a time), divided by the task counts.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cholesky.hpp"
#include "command_line.hpp"
#include "common/harness.hpp"

namespace {

// The modelled GPU's tile of 2048 and link latency; the real tiles' edge.
constexpr double model_tile = 2048;
constexpr double link_latency_s = 10e-6;
constexpr long real_tile = 64;

struct ModelOptions {
  int reps = 3;
  int tiles = 15;
  double scale = 4;
  int cpu_workers = 2;  // the GPU machine has 16 cores; its CPU workers matter when cold
  std::string only;     // run only the schedules whose names hold this
  // Each kernel's time on a 2048 tile, in milliseconds: 2 x 2048^3 flops at 50 TFLOP/s, 2048^3
  // at 35 and at 20, and potrf as measured.
  double gemm_ms = 2 * model_tile * model_tile * model_tile / 50e9;
  double syrk_ms = model_tile * model_tile * model_tile / 35e9;
  double trsm_ms = model_tile * model_tile * model_tile / 20e9;
  double potrf_ms = 1.2;
  double link_gbs = 54.7;  // pinned host-to-device copies (H200, the pinning suite)

  double tile_copy_seconds() const { return model_tile * model_tile * 8 / (link_gbs * 1e9); }
};

struct Variant {
  cholesky::Priorities priorities;
  int streams;
  bool priority_streams;  // the critical path's tasks on high-priority streams, as on a GPU
  bool gpu_only;          // every kernel held to the device, instead of placed automatically
  std::string label;
  // Placed automatically from: the model a calibrated run has (written for it); no model (a
  // program's first factorisation); the model a program's first run kept (its second run).
  enum class Model { calibrated, cold, kept } model = Model::calibrated;
};

// A kernel's time on a core over the modelled GPU's: the CPU implementations exist so that the
// kernels are placed as on a machine with a GPU, and are never chosen.
constexpr double cpu_slowdown = 1000;

// The performance model a calibrated run has: each kernel's modelled (scaled) time on the device
// and cpu_slowdown times that on the CPU, keyed by the bytes of its real tiles.
void write_calibrated_model(const std::string& file, const ModelOptions& o) {
  const double tile_bytes = static_cast<double>(real_tile * real_tile * sizeof(double));
  std::ofstream out(file);
  const struct {
    const char* name;
    int tiles;
    double ms;
  } kernels[] = {{"potrf", 1, o.potrf_ms},
                 {"trsm", 2, o.trsm_ms},
                 {"syrk", 2, o.syrk_ms},
                 {"gemm", 3, o.gemm_ms}};
  for (const auto& k : kernels)
    for (const auto& [kind, factor] : {std::pair{"emulated", 1.0}, {"cpu", cpu_slowdown}})
      out << k.name << '\t' << kind << '\t' << static_cast<std::size_t>(k.tiles * tile_bytes) << ' '
          << factor * o.scale * k.ms * 1e-3 << " 3\n";
  if (!out) throw std::runtime_error("cannot write the performance model file '" + file + "'");
}

struct Run {
  double seconds = 0;         // modelled makespan
  double kernel_seconds = 0;  // modelled, summed
};

Run factor(const Variant& variant, const ModelOptions& o,
           const cholesky::MatrixElements<double>& original, const std::string& model_file) {
  const double scale = o.scale;
  versa::Config config;
  config.cpu_workers = o.cpu_workers;
  config.gpus = 0;
  config.quiet = true;
  if (!variant.gpu_only && variant.model == Variant::Model::calibrated)
    write_calibrated_model(model_file, o);
  if (!variant.gpu_only && variant.model != Variant::Model::cold)
    config.perf_model_file = model_file;
  versa::EmulatedDeviceConfig gpu;
  gpu.memory_bytes = std::size_t{1} << 30;
  gpu.streams = variant.streams;
  gpu.priority_streams = variant.priority_streams;
  gpu.concurrent_kernels = 1;
  gpu.bandwidth_bytes_per_s =
      static_cast<double>(real_tile * real_tile * sizeof(double)) / (scale * o.tile_copy_seconds());
  gpu.latency_s = scale * link_latency_s;
  config.emulated_devices.push_back(gpu);

  const auto sleep = [scale](double milliseconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(scale * milliseconds * 1e-3));
  };
  const auto on_cpu = [sleep](double milliseconds) { sleep(cpu_slowdown * milliseconds); };
  using versa::Tile;
  const auto placement =
      variant.gpu_only ? versa::Placement::gpu_only : versa::Placement::automatic;
  const auto potrf = versa::task_type("potrf")
                         .cpu([&](Tile<double>) { on_cpu(o.potrf_ms); })
                         .emulated([&](Tile<double>) { sleep(o.potrf_ms); })
                         .placement(placement);
  const auto trsm = versa::task_type("trsm")
                        .cpu([&](Tile<const double>, Tile<double>) { on_cpu(o.trsm_ms); })
                        .emulated([&](Tile<const double>, Tile<double>) { sleep(o.trsm_ms); })
                        .placement(placement);
  const auto syrk = versa::task_type("syrk")
                        .cpu([&](Tile<const double>, Tile<double>) { on_cpu(o.syrk_ms); })
                        .emulated([&](Tile<const double>, Tile<double>) { sleep(o.syrk_ms); })
                        .placement(placement);
  const auto gemm =
      versa::task_type("gemm")
          .cpu([&](Tile<const double>, Tile<const double>, Tile<double>) { on_cpu(o.gemm_ms); })
          .emulated([&](Tile<const double>, Tile<const double>, Tile<double>) { sleep(o.gemm_ms); })
          .placement(placement);

  cholesky::MatrixElements<double> a = original;
  const long n = real_tile * o.tiles;
  versa::Runtime rt{config};
  versa::TiledMatrix<double> tiles(rt, a.data(), n, n, n, real_tile);
  const auto start = bench::Clock::now();
  cholesky::submit_tasks(rt, tiles, potrf, trsm, syrk, gemm,
                         {variant.priorities, /*home_when_final=*/true});
  rt.wait_all();
  Run run;
  run.seconds = bench::seconds_since(start) / scale;
  const versa::DeviceStatistics device = rt.statistics().at(1);
  run.kernel_seconds = device.kernel_seconds / scale;
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  ModelOptions o;
  example::OptionParser parser{
      "versa-bench-cholesky-model",
      "The tiled Cholesky's schedule on a modelled GPU (an emulated device whose "
      "kernels and link take an H200's times)."};
  example::add_positive_option(parser, "--reps", o.reps, "N", "repetitions per schedule (median)");
  example::add_positive_option(parser, "--tiles", o.tiles, "T", "tiles per side (15: n = 30720)");
  const auto add_time = [&parser](const char* name, double& target, const char* type_name,
                                  const char* description) {
    parser.option(name, target, description)
        .type_name(type_name)
        .check([](const std::string& text) -> std::string {
          char* end = nullptr;
          const double value = std::strtod(text.c_str(), &end);
          if (end == text.c_str() || *end != '\0' || !(value > 0) || !std::isfinite(value))
            return "expects a positive number, not '" + text + "'";
          return {};
        })
        .show_default();
  };
  example::add_positive_option(parser, "--cpu-workers", o.cpu_workers, "N", "CPU workers");
  parser.option("--only", o.only, "run only the schedules whose names contain TEXT")
      .type_name("TEXT");
  add_time("--scale", o.scale, "S", "modelled times stretched S times in the run");
  add_time("--gemm-ms", o.gemm_ms, "G", "a 2048-tile gemm's time");
  add_time("--syrk-ms", o.syrk_ms, "S", "a 2048-tile syrk's time");
  add_time("--trsm-ms", o.trsm_ms, "T", "a 2048-tile trsm's time");
  add_time("--potrf-ms", o.potrf_ms, "P", "a 2048-tile potrf's time");
  add_time("--link-gbs", o.link_gbs, "L", "the host link's GB/s (each way)");
  if (const std::optional<int> status = parser.parse(argc, argv)) return *status;

  const long n = real_tile * o.tiles;
  const cholesky::MatrixElements<double> original = cholesky::spd_matrix<double>(n);
  const cholesky::TaskCounts counts = cholesky::task_counts(static_cast<std::size_t>(o.tiles));
  const double compute_bound = (counts.gemm * o.gemm_ms + counts.syrk * o.syrk_ms +
                                counts.trsm * o.trsm_ms + counts.potrf * o.potrf_ms) *
                               1e-3;
  const double upload_bound =
      static_cast<double>(o.tiles) * (o.tiles + 1) / 2 * o.tile_copy_seconds();
  std::printf(
      "model       %d x %d tiles of %.0f (n = %.0f), kernels gemm %.3f syrk %.3f trsm %.3f "
      "potrf %.3f ms, link %.1f GB/s: a tile in %.3f ms; scale %.0f\n",
      o.tiles, o.tiles, model_tile, o.tiles * model_tile, o.gemm_ms, o.syrk_ms, o.trsm_ms,
      o.potrf_ms, o.link_gbs, o.tile_copy_seconds() * 1e3, o.scale);
  std::printf("bounds      kernels %.1f ms, uploads %.1f ms (medians of %d runs below)\n",
              compute_bound * 1e3, upload_bound * 1e3, o.reps);
  std::printf("%-72s %10s %10s %12s\n", "schedule", "ms", "kernels ms", "/ kernels");
  // The wavefront priorities without high-priority streams only: their ranks stay positive but
  // in the last steps, so that those streams would split the tasks by step, not by path. The
  // schedules held to the device keep the names they had before placement was modelled.
  const auto critical_path = cholesky::Priorities::critical_path;
  const auto wavefront = cholesky::Priorities::wavefront;
  std::vector<Variant> variants;
  for (const bool gpu_only : {false, true})
    for (const int streams : {4, 8})
      for (const auto& [priorities, priority_streams] :
           {std::pair{critical_path, false}, {critical_path, true}, {wavefront, false}})
        variants.push_back({priorities, streams, priority_streams, gpu_only,
                            std::string(gpu_only ? "" : "placement=automatic,") + "priorities=" +
                                (priorities == wavefront ? "wavefront" : "critical_path") +
                                ",streams=" + std::to_string(streams) +
                                (priority_streams ? ",priority_streams" : "")});
  // A first run: the model learns each kernel's times on the CPU and the device as it goes.
  // Then a second run, from the model a first one kept (each repetition after a first run of
  // its own, untimed), as a program's runs after its first on a GPU machine are.
  variants.push_back({critical_path, 4, false, false,
                      "placement=automatic,cold,priorities=critical_path,streams=4",
                      Variant::Model::cold});
  variants.push_back({critical_path, 4, false, false,
                      "placement=automatic,kept,priorities=critical_path,streams=4",
                      Variant::Model::kept});
  const std::string model_file = (std::filesystem::temp_directory_path() /
                                  ("versa-cholesky-model-" + std::to_string(::getpid()) + ".txt"))
                                     .string();
  for (const Variant& variant : variants) {
    if (variant.label.find(o.only) == std::string::npos) continue;
    std::vector<double> seconds, kernels;
    for (int r = 0; r < o.reps; ++r) {
      if (variant.model == Variant::Model::kept) {
        std::filesystem::remove(model_file);
        factor(variant, o, original, model_file);  // the first run, which keeps its model
      }
      const Run run = factor(variant, o, original, model_file);
      seconds.push_back(run.seconds);
      kernels.push_back(run.kernel_seconds);
    }
    const double makespan = bench::median(seconds);
    std::printf("%-72s %10.1f %10.1f %12.3f\n", variant.label.c_str(), makespan * 1e3,
                bench::median(kernels) * 1e3, makespan / compute_bound);
    bench::print_result("cholesky-model", "versa",
                        "tiles=" + std::to_string(o.tiles) + "," + variant.label, "seconds",
                        makespan, "s");
  }
  std::filesystem::remove(model_file);
  return 0;
}
