// The tiled Cholesky of examples/cholesky against LAPACK's unblocked-by-us dpotrf.
#include "cholesky.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "base/thread_annotations.hpp"  // VERSA_TSAN
#include "owned_tiles.hpp"
#include "support/config.hpp"

namespace {

using versa::testing::workers;

std::vector<double> spd_matrix(int n, unsigned seed) {
  std::vector<double> a(static_cast<std::size_t>(n) * n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int j = 0; j < n; ++j) {
    for (int i = j; i < n; ++i) a[i + j * n] = a[j + i * n] = uniform(rng);
    a[j + j * n] += n;
  }
  return a;
}

// The largest error of the lower triangle of `a` against `expected`, relative to the diagonal.
double worst_error(const std::vector<double>& a, const std::vector<double>& expected, int n) {
  double worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i)
      worst = std::max(
          worst, std::abs(a[i + j * n] - expected[i + j * n]) / std::abs(expected[j + j * n]));
  return worst;
}

// (n, tile, workers, panel solve): 1x1, 2x2 and 3x3 tiles, edge tiles, n = 1; each panel
// solved by trsm, or through its diagonal tile's inverse (trtri, then trmm) in a scratch tile
// of its step, freed by wait_all.
class TiledCholesky
    : public testing::TestWithParam<std::tuple<int, int, int, cholesky::PanelSolve>> {};

TEST_P(TiledCholesky, MatchesLapack) {
  const auto [n, tile, worker_count, solve] = GetParam();
  cholesky::use_one_blas_thread();
  const std::vector<double> original = spd_matrix(n, 7u + n);
  std::vector<double> expected = original;
  ASSERT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, expected.data(), n), 0);

  std::vector<double> a = original;
  versa::Runtime rt{workers(worker_count)};
  versa::TiledMatrix<double> tiles(rt, a.data(), n, n, n, tile);
  cholesky::submit_factorisation(rt, tiles, solve);
  rt.wait_all();
  EXPECT_EQ(rt.scratch_memory_bytes(), 0u);
  EXPECT_LT(worst_error(a, expected, n), 1e-12) << "n=" << n << " tile=" << tile;
  // The strict upper triangle is not touched.
  for (int j = 1; j < n; ++j)
    for (int i = 0; i < j; ++i) ASSERT_EQ(a[i + j * n], original[i + j * n]);
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, TiledCholesky,
    testing::Combine(testing::Values(1, 8, 16, 24, 29, 64, 100), testing::Values(1, 8, 10, 64),
                     testing::Values(1, 2, 4),
                     testing::Values(cholesky::PanelSolve::trsm, cholesky::PanelSolve::inverse)),
    [](const auto& info) {
      return "n" + std::to_string(std::get<0>(info.param)) + "_tile" +
             std::to_string(std::get<1>(info.param)) + "_workers" +
             std::to_string(std::get<2>(info.param)) +
             (std::get<3>(info.param) == cholesky::PanelSolve::inverse ? "_inverse" : "");
    });

// The factor checks: LAPACK's factor passes both; one wrong entry fails both; the estimate never
// exceeds the exact residual.
TEST(CholeskyChecks, ResidualsSeparateRightFactorsFromWrongOnes) {
#if VERSA_TSAN
  // The residuals use every BLAS thread, and OpenBLAS's thread pool is not built with
  // ThreadSanitizer, which reports the pool's hand-offs as races (seen with its Cooper Lake
  // kernels). Nothing of Versa runs here; the Release run checks the residuals.
  GTEST_SKIP() << "OpenBLAS's threads are not instrumented";
#endif
  const int n = 96;
  const std::vector<double> a = spd_matrix(n, 3u);
  std::vector<double> factor = a;
  ASSERT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, factor.data(), n), 0);
  const double exact = cholesky::scaled_residual(a.data(), factor.data(), n);
  const double estimate = cholesky::scaled_residual_estimate(a.data(), factor.data(), n);
  EXPECT_LT(exact, 10.0);
  EXPECT_LE(estimate, exact * (1 + 1e-9));
  std::vector<float> af(a.begin(), a.end()), ff(factor.begin(), factor.end());
  EXPECT_LT(cholesky::scaled_residual(af.data(), ff.data(), n), 10.0);

  factor[40 + 17 * n] *= 1.0 + 1e-3;
  EXPECT_GT(cholesky::scaled_residual(a.data(), factor.data(), n), 100.0);
  EXPECT_GT(cholesky::scaled_residual_estimate(a.data(), factor.data(), n), 100.0);
  // The strict upper triangle is not part of the factor.
  std::vector<double> right = a;
  ASSERT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, right.data(), n), 0);
  right[17 + 40 * n] = 12345.0;
  EXPECT_LT(cholesky::scaled_residual(a.data(), right.data(), n), 10.0);
  EXPECT_LT(cholesky::scaled_residual_estimate(a.data(), right.data(), n), 10.0);
  cholesky::use_one_blas_thread();
}

// Tasks of `type` that ran on devices of `kind`, from the runtime's task statistics.
std::uint64_t tasks_on(const versa::Runtime& rt, const std::string& type, const std::string& kind) {
  for (const versa::TaskStatistics& t : rt.task_statistics())
    if (t.task_type == type && t.device_kind == kind) return t.tasks;
  return 0;
}

// The runtime's task statistics count every task of the factorisation once, under its kernel's
// name, and time the CPU bodies: each kernel's time is positive, and their sum cannot exceed the
// workers' time over the factorisation.
TEST(TiledCholeskyStatistics, CountTasksAndTimeKernels) {
  cholesky::use_one_blas_thread();
  const int n = 192, tile = 32, worker_count = 2;
  std::vector<double> a = spd_matrix(n, 5u);
  versa::Config config = workers(worker_count);
  config.task_statistics = true;
  versa::Runtime rt{config};
  double wall = 0;
  {
    versa::TiledMatrix<double> tiles(rt, a.data(), n, n, n, tile);
    const auto start = std::chrono::steady_clock::now();
    cholesky::submit_factorisation(rt, tiles);
    rt.wait_all();
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const std::vector<versa::TaskStatistics> all = rt.task_statistics();
  ASSERT_EQ(all.size(), 4u) << "one entry per kernel, all on the CPU";
  const cholesky::TaskCounts counts = cholesky::task_counts(n / tile);
  double kernel_seconds = 0;
  for (int kernel = 0; kernel < static_cast<int>(std::size(cholesky::kernels)); ++kernel) {
    const char* name = cholesky::kernels[kernel];
    if (counts[kernel] == 0) continue;  // trtri and trmm: the inverse's
    const auto it = std::find_if(all.begin(), all.end(), [&](const versa::TaskStatistics& t) {
      return t.task_type == name && t.device_kind == "cpu";
    });
    ASSERT_NE(it, all.end()) << name;
    EXPECT_EQ(it->tasks, counts[kernel]) << name;
    EXPECT_GT(it->kernel_seconds, 0.0) << name;
    kernel_seconds += it->kernel_seconds;
  }
  EXPECT_LE(kernel_seconds, worker_count * wall);
}

// On CPU + emulated devices whose memory holds a quarter of the matrix (or less): every task
// runs somewhere, device copies are evicted and written home constantly, and the factor still
// matches LAPACK. Placement: the given rule for every kernel.
struct DeviceCase {
  int n, tile, devices;
  versa::Placement rule;
  bool home_when_final = false;  // each tile copied home once final (Runtime::copy_home)
  cholesky::Priorities priorities = cholesky::Priorities::critical_path;
  bool priority_streams = false;  // the panel's tasks on high-priority streams, as on a GPU
  bool serial_gemm = false;       // the gemms one after another (Config::device_serial_types)
  cholesky::PanelSolve solve = cholesky::PanelSolve::trsm;
  int panel_kernels = 0;  // the high-priority streams' engine of their own, as a split GPU's
};

class TiledCholeskyOnDevices : public testing::TestWithParam<DeviceCase> {};

TEST_P(TiledCholeskyOnDevices, MatchesLapackThroughEviction) {
  const DeviceCase c = GetParam();
  cholesky::use_one_blas_thread();
  const std::vector<double> original = spd_matrix(c.n, 11u + c.n);
  std::vector<double> expected = original;
  ASSERT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', c.n, expected.data(), c.n), 0);
  std::vector<double> a = original;
  const std::size_t quarter = original.size() * sizeof(double) / 4;
  const std::size_t tile_bytes = static_cast<std::size_t>(c.tile) * c.tile * sizeof(double);
  const std::size_t memory = std::max({quarter, 3 * tile_bytes, std::size_t{64}});
  versa::Config config = versa::testing::with_emulated(workers(2), c.devices, memory);
  for (versa::EmulatedDeviceConfig& device : config.emulated_devices) {
    device.priority_streams = c.priority_streams;
    device.panel_kernels = c.panel_kernels;
  }
  if (c.serial_gemm) config.device_serial_types = {"gemm"};
  config.task_statistics = true;
  versa::Runtime rt{config};
  {
    versa::TiledMatrix<double> tiles(rt, a.data(), c.n, c.n, c.n, c.tile);
    cholesky::Placements all;
    for (const char* kernel : cholesky::kernels) all[kernel] = c.rule;
    cholesky::submit_factorisation(rt, tiles, c.solve, all, {c.priorities, c.home_when_final});
    rt.wait_all();
  }
  EXPECT_EQ(rt.scratch_memory_bytes(), 0u);
  EXPECT_LT(worst_error(a, expected, c.n), 1e-12);
  for (int j = 1; j < c.n; ++j)
    for (int i = 0; i < j; ++i) ASSERT_EQ(a[i + j * c.n], original[i + j * c.n]);
  const auto tiles_per_side = static_cast<std::size_t>((c.n + c.tile - 1) / c.tile);
  const cholesky::TaskCounts counts = cholesky::task_counts(tiles_per_side, c.solve);
  std::uint64_t on_device = 0, on_cpu = 0;
  for (int kernel = 0; kernel < static_cast<int>(std::size(cholesky::kernels)); ++kernel) {
    const std::uint64_t here = tasks_on(rt, cholesky::kernels[kernel], "emulated");
    const std::uint64_t there = tasks_on(rt, cholesky::kernels[kernel], "cpu");
    EXPECT_EQ(here + there, counts[kernel]) << cholesky::kernels[kernel];
    on_device += here;
    on_cpu += there;
  }
  EXPECT_GT(on_device, 0u) << "no task ran on an emulated device";
  // Each tile once final (the inverses are scratch, never copied home).
  EXPECT_EQ(tasks_on(rt, "copy home", "cpu"),
            c.home_when_final ? tiles_per_side * (tiles_per_side + 1) / 2 : 0u);
  if (c.rule == versa::Placement::gpu_only) {
    EXPECT_EQ(on_cpu, 0u);
    std::uint64_t evictions = 0;
    for (const auto& device : rt.statistics()) evictions += device.evictions;
    if (original.size() * sizeof(double) > memory) {
      EXPECT_GT(evictions, 0u) << "the matrix did not exceed device memory";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    EmulatedDevices, TiledCholeskyOnDevices,
    testing::Values(
        DeviceCase{1, 1, 1, versa::Placement::gpu_only},
        DeviceCase{64, 16, 1, versa::Placement::gpu_only},
        DeviceCase{100, 16, 1, versa::Placement::gpu_only},
        DeviceCase{100, 16, 2, versa::Placement::gpu_only},
        DeviceCase{100, 16, 1, versa::Placement::automatic},
        DeviceCase{96, 32, 2, versa::Placement::automatic},
        DeviceCase{100, 16, 2, versa::Placement::gpu_only, true},
        DeviceCase{96, 32, 2, versa::Placement::automatic, true},
        DeviceCase{100, 16, 1, versa::Placement::gpu_only, true, cholesky::Priorities::wavefront},
        DeviceCase{100, 16, 2, versa::Placement::gpu_only, true,
                   cholesky::Priorities::critical_path, true},
        DeviceCase{100, 16, 2, versa::Placement::gpu_only, true,
                   cholesky::Priorities::critical_path, true, true},
        DeviceCase{96, 32, 2, versa::Placement::automatic, false, cholesky::Priorities::wavefront},
        DeviceCase{100, 16, 1, versa::Placement::gpu_only, false,
                   cholesky::Priorities::critical_path, false, false,
                   cholesky::PanelSolve::inverse},
        DeviceCase{100, 16, 2, versa::Placement::gpu_only, true,
                   cholesky::Priorities::critical_path, true, false, cholesky::PanelSolve::inverse},
        DeviceCase{96, 32, 2, versa::Placement::automatic, true, cholesky::Priorities::wavefront,
                   false, false, cholesky::PanelSolve::inverse},
        DeviceCase{100, 16, 2, versa::Placement::gpu_only, true, cholesky::Priorities::panel, true},
        DeviceCase{100, 16, 1, versa::Placement::gpu_only, false, cholesky::Priorities::panel, true,
                   false, cholesky::PanelSolve::inverse},
        DeviceCase{100, 16, 2, versa::Placement::gpu_only, true, cholesky::Priorities::panel, true,
                   false, cholesky::PanelSolve::trsm, 1},
        DeviceCase{96, 32, 1, versa::Placement::automatic, true, cholesky::Priorities::panel, true,
                   false, cholesky::PanelSolve::inverse, 2}),
    [](const testing::TestParamInfo<DeviceCase>& info) {
      return "n" + std::to_string(info.param.n) + "_tile" + std::to_string(info.param.tile) + "_" +
             std::to_string(info.param.devices) + "dev_" + versa::to_string(info.param.rule) +
             (info.param.home_when_final ? "_home_when_final" : "") +
             (info.param.priorities == cholesky::Priorities::wavefront ? "_wavefront"
              : info.param.priorities == cholesky::Priorities::panel   ? "_panel"
                                                                       : "") +
             (info.param.priority_streams ? "_priority_streams" : "") +
             (info.param.serial_gemm ? "_serial_gemm" : "") +
             (info.param.solve == cholesky::PanelSolve::inverse ? "_inverse" : "") +
             (info.param.panel_kernels > 0
                  ? "_panel_engine" + std::to_string(info.param.panel_kernels)
                  : "");
    });

// CPU + one real GPU whose memory is capped at a quarter of an n x n matrix, with task
// statistics.
versa::Config one_gpu_holding_a_quarter(int n) {
  versa::Config config = workers(2);
  config.gpus = 1;
  config.task_statistics = true;
  config.device_memory_limit = static_cast<std::size_t>(n) * n * sizeof(double) / 4;
  return config;
}

// On CPU + a real GPU (cuBLAS/cuSOLVER kernels) with GPU memory capped below the matrix: skips
// without a GPU.
TEST(TiledCholeskyOnGpu, MatchesLapackOutOfCore) {
  const int n = 512, tile = 64;
  versa::Runtime rt{one_gpu_holding_a_quarter(n)};
  if (rt.device_count() == 0) GTEST_SKIP() << "no GPU: " << rt.topology_summary();
  cholesky::use_one_blas_thread();
  const std::vector<double> original = spd_matrix(n, 5);
  std::vector<double> expected = original, a = original;
  ASSERT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, expected.data(), n), 0);
  {
    versa::TiledMatrix<double> tiles(rt, a.data(), n, n, n, tile);
    cholesky::submit_factorisation(rt, tiles, {{"gemm", versa::Placement::gpu_only}});
    rt.wait_all();
  }
  EXPECT_LT(worst_error(a, expected, n), 1e-12);
  EXPECT_EQ(tasks_on(rt, "gemm", "cuda"), cholesky::task_counts(n / tile).gemm)
      << "gemm on the GPU";
  EXPECT_GT(rt.statistics()[1].evictions, 0u);
}

// On CPU + one GPU named twice (Config::cuda_devices): two devices sharing its memory, every
// kernel on them, tiles moving between them over their peer link. Skips without a GPU.
TEST(TiledCholeskyOnGpu, MatchesLapackOnTwoDevicesOfOneGpu) {
  versa::Config config = workers(2);
  config.cuda_devices = {0, 0};
  config.link_cost_file = "none";
  const int n = 768, tile = 64;
  config.device_memory_limit = static_cast<std::size_t>(n) * n * sizeof(double) / 4;
  versa::Runtime rt{config};
  if (rt.device_count() == 0) GTEST_SKIP() << "no GPU: " << rt.topology_summary();
  ASSERT_EQ(rt.device_count(), 2);
  cholesky::use_one_blas_thread();
  const std::vector<double> original = spd_matrix(n, 9);
  std::vector<double> expected = original, a = original;
  ASSERT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, expected.data(), n), 0);
  {
    versa::TiledMatrix<double> tiles(rt, a.data(), n, n, n, tile);
    const cholesky::Placements on_gpus = {{"potrf", versa::Placement::gpu_only},
                                          {"trsm", versa::Placement::gpu_only},
                                          {"syrk", versa::Placement::gpu_only},
                                          {"gemm", versa::Placement::gpu_only}};
    cholesky::submit_factorisation(rt, tiles, on_gpus);
    rt.wait_all();
  }
  EXPECT_LT(worst_error(a, expected, n), 1e-12);
  const std::vector<versa::DeviceStatistics> devices = rt.statistics();
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0].tasks, 0u);
  EXPECT_GT(devices[1].tasks, 0u) << devices[1].name;
  EXPECT_GT(devices[2].tasks, 0u) << devices[2].name;
}

// Every kernel on a real GPU with each panel solved through the inverse (cuSOLVER's trtri,
// cuBLAS's trmm), GPU memory capped below the matrix: skips without a GPU.
TEST(TiledCholeskyOnGpu, MatchesLapackThroughTheInverse) {
  const int n = 512, tile = 64;
  versa::Runtime rt{one_gpu_holding_a_quarter(n)};
  if (rt.device_count() == 0) GTEST_SKIP() << "no GPU: " << rt.topology_summary();
  cholesky::use_one_blas_thread();
  const std::vector<double> original = spd_matrix(n, 13);
  std::vector<double> expected = original, a = original;
  ASSERT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, expected.data(), n), 0);
  {
    versa::TiledMatrix<double> tiles(rt, a.data(), n, n, n, tile);
    cholesky::Placements on_gpu;
    for (const char* kernel : cholesky::kernels) on_gpu[kernel] = versa::Placement::gpu_only;
    cholesky::submit_factorisation(rt, tiles, cholesky::PanelSolve::inverse, on_gpu,
                                   {.home_when_final = true});
    rt.wait_all();
  }
  EXPECT_LT(worst_error(a, expected, n), 1e-12);
  const cholesky::TaskCounts counts =
      cholesky::task_counts(n / tile, cholesky::PanelSolve::inverse);
  EXPECT_EQ(tasks_on(rt, "trtri", "cuda"), counts.trtri);
  EXPECT_EQ(tasks_on(rt, "trmm", "cuda"), counts.trmm);
  EXPECT_EQ(tasks_on(rt, "trsm", "cuda"), 0u);
}

// Every kernel on a real GPU whose high-priority streams, where the whole panel runs (the panel
// priorities), have SMs of their own (Config::cuda_panel_sms), tiles moving in and out as above:
// skips without a GPU.
TEST(TiledCholeskyOnGpu, MatchesLapackWithThePanelOnSmsOfItsOwn) {
  const int n = 512, tile = 64;
  versa::Config config = one_gpu_holding_a_quarter(n);
  config.cuda_panel_sms = 16;
  versa::Runtime rt{config};
  if (rt.device_count() == 0) GTEST_SKIP() << "no GPU: " << rt.topology_summary();
  EXPECT_NE(rt.topology_summary().find("panel on"), std::string::npos) << rt.topology_summary();
  cholesky::use_one_blas_thread();
  const std::vector<double> original = spd_matrix(n, 17);
  std::vector<double> expected = original, a = original;
  ASSERT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, expected.data(), n), 0);
  {
    versa::TiledMatrix<double> tiles(rt, a.data(), n, n, n, tile);
    cholesky::Placements on_gpu;
    for (const char* kernel : cholesky::kernels) on_gpu[kernel] = versa::Placement::gpu_only;
    cholesky::submit_factorisation(rt, tiles, on_gpu, {.priorities = cholesky::Priorities::panel});
    rt.wait_all();
  }
  EXPECT_LT(worst_error(a, expected, n), 1e-12);
  const cholesky::TaskCounts counts = cholesky::task_counts(n / tile);
  EXPECT_EQ(tasks_on(rt, "potrf", "cuda"), counts.potrf);
  EXPECT_EQ(tasks_on(rt, "gemm", "cuda"), counts.gemm);
}

// A matrix whose trailing block is indefinite: the failure appears in a later diagonal tile,
// potrf A(2,2), which wait_all names, and the tasks after it are cancelled.
void expect_indefinite_tile_named(versa::Runtime& rt, const cholesky::Placements& placements) {
  const int n = 40, tile = 10;
  std::vector<double> a = spd_matrix(n, 3);
  for (int i = 25; i < n; ++i) a[i + i * n] = -1.0;
  versa::TiledMatrix<double> tiles(rt, a.data(), n, n, n, tile);
  cholesky::submit_factorisation(rt, tiles, placements);
  try {
    rt.wait_all();
    FAIL() << "the factorisation of an indefinite matrix succeeded";
  } catch (const versa::TaskFailure& failure) {
    EXPECT_EQ(failure.task_name(), "potrf A(2,2)");
    EXPECT_NE(std::string(failure.what()).find("not positive definite"), std::string::npos)
        << failure.what();
    // potrf(3,3) and its trsm/syrk/gemm predecessors of later steps were cancelled.
    EXPECT_GT(failure.cancelled_tasks(), 0u);
  }
}

TEST(TiledCholeskyErrors, NonPositiveDefiniteTileIsNamedAndNothingHangs) {
  versa::Runtime rt{workers(2)};
  expect_indefinite_tile_named(rt, {});
}

// The same with every kernel on a GPU, where cuSOLVER leaves the failure in a device word that
// the task checks once it has run (CudaContext::check_after): skips without a GPU.
TEST(TiledCholeskyOnGpu, NonPositiveDefiniteTileIsNamedAndNothingHangs) {
  versa::Config config = workers(2);
  config.gpus = 1;
  versa::Runtime rt{config};
  if (rt.device_count() == 0) GTEST_SKIP() << "no GPU: " << rt.topology_summary();
  const versa::Placement gpu = versa::Placement::gpu_only;
  expect_indefinite_tile_named(rt, {{"potrf", gpu}, {"trsm", gpu}, {"syrk", gpu}, {"gemm", gpu}});
}

TEST(TiledCholeskyErrors, PlacementsAreParsedWithClearErrors) {
  const auto placements = cholesky::parse_placements("potrf=cpu,gemm=auto");
  EXPECT_EQ(placements.at("potrf"), versa::Placement::cpu_only);
  EXPECT_EQ(placements.at("gemm"), versa::Placement::automatic);
  EXPECT_EQ(cholesky::parse_placements("trtri=gpu").at("trtri"), versa::Placement::gpu_only);
  EXPECT_THROW(cholesky::parse_placements("getrf=cpu"), std::invalid_argument);
  EXPECT_THROW(cholesky::parse_placements("potrf=fpga"), std::invalid_argument);
  EXPECT_THROW(cholesky::parse_placements("potrf"), std::invalid_argument);
}

// The wavefront scheme ranks every task by its step and tile, the top left first and across
// steps; the critical path's marks only the next panel's tasks, the panel scheme the whole
// panel and the next row's syrk. Each parses from its name.
TEST(TiledCholeskyPriorities, RankTheTasksAsDocumented) {
  const cholesky::TaskPriorities wave(cholesky::Priorities::wavefront, 5);
  EXPECT_EQ(wave.potrf(0), 10);
  EXPECT_EQ(wave.trsm(0, 3), 7);
  EXPECT_EQ(wave.syrk(1, 2), 4);
  EXPECT_EQ(wave.gemm(1, 3, 2), 3);
  EXPECT_EQ(wave.gemm(2, 4, 3), -1) << "below the default, as in StarPU";
  const cholesky::TaskPriorities wave15(cholesky::Priorities::wavefront, 15);
  EXPECT_GT(wave15.gemm(1, 3, 2), wave15.gemm(0, 14, 13)) << "a later step's top left goes first";
  const cholesky::TaskPriorities critical(cholesky::Priorities::critical_path, 5);
  EXPECT_EQ(critical.potrf(3), 1);
  EXPECT_EQ(critical.trsm(1, 2), 1);
  EXPECT_EQ(critical.trsm(1, 3), 0);
  EXPECT_EQ(critical.syrk(1, 2), 1);
  EXPECT_EQ(critical.syrk(1, 3), 0);
  EXPECT_EQ(critical.gemm(0, 2, 1), 0);
  const cholesky::TaskPriorities panel(cholesky::Priorities::panel, 5);
  EXPECT_EQ(panel.potrf(3), 1);
  EXPECT_EQ(panel.trsm(1, 2), 1);
  EXPECT_EQ(panel.trsm(1, 4), 1) << "the whole panel";
  EXPECT_EQ(panel.syrk(1, 2), 1);
  EXPECT_EQ(panel.syrk(1, 3), 0);
  EXPECT_EQ(panel.gemm(0, 2, 1), 0);
  EXPECT_EQ(cholesky::parse_priorities("panel"), cholesky::Priorities::panel);
  EXPECT_EQ(cholesky::priorities_parameter(cholesky::Priorities::panel), ",priorities=panel");
  EXPECT_EQ(cholesky::priorities_parameter(cholesky::Priorities::wavefront),
            ",priorities=wavefront");
  EXPECT_EQ(cholesky::priorities_parameter(cholesky::Priorities::critical_path), "");
  EXPECT_EQ(cholesky::parse_priorities("wavefront"), cholesky::Priorities::wavefront);
  EXPECT_EQ(cholesky::parse_priorities("critical_path"), cholesky::Priorities::critical_path);
  EXPECT_THROW(cholesky::parse_priorities("lifo"), std::invalid_argument);
}

TEST(TiledCholeskyCounts, MatchTheAlgorithm) {
  const auto c = cholesky::task_counts(20);
  EXPECT_EQ(c.total(), 1540u);  // 20 * 21 * 22 / 6
  EXPECT_EQ(cholesky::task_counts(50).total(), 22100u);
  EXPECT_EQ(cholesky::task_counts(1).total(), 1u);
  EXPECT_EQ(c.trsm, 190u);
  EXPECT_EQ(c.trtri + c.trmm, 0u);
  // Through the inverse: one trtri per step with a panel, a trmm for each trsm.
  const auto inverse = cholesky::task_counts(20, cholesky::PanelSolve::inverse);
  EXPECT_EQ(inverse.trsm, 0u);
  EXPECT_EQ(inverse.trtri, 19u);
  EXPECT_EQ(inverse.trmm, 190u);
  EXPECT_EQ(inverse.total(), 1540u + 19u);
  EXPECT_EQ(cholesky::task_counts(1, cholesky::PanelSolve::inverse).total(), 1u);
  EXPECT_EQ(cholesky::task_counts(0, cholesky::PanelSolve::inverse).total(), 0u);
  EXPECT_EQ(cholesky::parse_panel_solve("inverse"), cholesky::PanelSolve::inverse);
  EXPECT_EQ(cholesky::parse_panel_solve("trsm"), cholesky::PanelSolve::trsm);
  EXPECT_THROW(cholesky::parse_panel_solve("lu"), std::invalid_argument);
}

// The test matrix: any block made alone is the whole matrix's block, and the matrix is
// symmetric and strictly diagonally dominant (hence positive definite). Of order 300, its
// columns are made by several threads (64 columns at least each).
TEST(CholeskyTestMatrix, AnyBlockIsTheWholeMatrixsAndItIsPositiveDefinite) {
  constexpr long n = 300;
  const auto a = cholesky::spd_matrix<double>(n);
  for (long j = 0; j < n; ++j) {
    double off_diagonal = 0;
    for (long i = 0; i < n; ++i) {
      ASSERT_EQ(a[i + j * n], cholesky::spd_entry<double>(n, i, j));
      ASSERT_EQ(a[i + j * n], a[j + i * n]);
      if (i != j) off_diagonal += std::abs(a[i + j * n]);
    }
    EXPECT_GT(a[j + j * n], off_diagonal);
  }
  std::vector<double> block(11 * 7);
  cholesky::spd_block(n, 5, 230, 11, 7, block.data(), 11);
  for (long c = 0; c < 7; ++c)
    for (long r = 0; r < 11; ++r) ASSERT_EQ(block[r + c * 11], a[(5 + r) + (230 + c) * n]);
  // Not a constant: the entries spread over [-1, 1).
  const auto [low, high] = std::minmax_element(a.begin() + 1, a.begin() + n);
  EXPECT_LT(*low, -0.5);
  EXPECT_GT(*high, 0.5);
}

// A rank's tiles are its owner's tiles of the test matrix, each of leading dimension its rows;
// the others are null; placed back, they make the lower triangle of the matrix.
TEST(OwnedTiles, HoldTheTilesOfOneOwnerAndPlaceBackIntoTheMatrix) {
  constexpr long n = 10, tile = 4;  // tile rows of 4, 4 and 2
  const auto a = cholesky::spd_matrix<double>(n);
  std::vector<double> placed(n * n, 0.0);
  std::size_t bytes = 0;
  for (int rank = 0; rank < 2; ++rank) {
    cholesky::OwnedTiles owned(
        n, tile, rank, [](std::size_t i, std::size_t j) { return static_cast<int>((i + j) % 2); });
    ASSERT_EQ(owned.tile_rows(), 3u);
    EXPECT_EQ(owned.rows(2), 2);
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t i = j; i < 3; ++i) {
        const double* t = owned.data(i, j);
        ASSERT_EQ(t != nullptr, static_cast<int>((i + j) % 2) == rank) << i << "," << j;
        if (t == nullptr) continue;
        const auto rows = static_cast<std::size_t>(owned.rows(i));
        const auto cols = static_cast<std::size_t>(owned.rows(j));
        for (std::size_t c = 0; c < cols; ++c)
          for (std::size_t r = 0; r < rows; ++r)
            ASSERT_EQ(t[r + c * rows], a[(i * tile + r) + (j * tile + c) * n]);
        cholesky::place_tile(placed.data(), n, tile, i, j, t, rows, rows, cols);
      }
    bytes += owned.bytes();
  }
  EXPECT_EQ(bytes, (4 * 4 * 3 + 2 * 4 * 2 + 2 * 2) * sizeof(double));  // the lower triangle's tiles
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i)
      ASSERT_EQ(placed[i + j * n], j / tile <= i / tile ? a[i + j * n] : 0.0) << i << "," << j;
}

// What submit_factorisation calls on a runtime, counted; nothing runs. Scratch tiles (the
// inverses) come from a real runtime.
struct CountingRuntime {
  versa::Runtime& scratch_from;
  std::size_t submitted = 0;
  template <class... Args>
  void submit(const Args&...) {
    ++submitted;
  }
  void copy_home(const versa::HandleBase&) {}
  template <class T>
  versa::TileHandle<T> scratch_tile(std::size_t rows, std::size_t cols, std::string name) {
    return scratch_from.scratch_tile<T>(rows, cols, std::move(name));
  }
};

// Schedule::after_step(k) comes once step k's tasks are all submitted and before step k + 1's,
// with either solve of the panel.
TEST(TiledCholeskySchedule, AfterStepComesOnceTheStepIsSubmitted) {
  constexpr int nt = 5;
  versa::Runtime rt{workers(1)};
  std::vector<double> a(nt * nt, 1.0);
  versa::TiledMatrix<double> tiles(rt, a.data(), nt, nt, nt, 1);
  for (const cholesky::PanelSolve solve :
       {cholesky::PanelSolve::trsm, cholesky::PanelSolve::inverse}) {
    const bool inverse = solve == cholesky::PanelSolve::inverse;
    CountingRuntime counting{rt};
    std::vector<std::size_t> seen;
    cholesky::Schedule schedule;
    schedule.after_step = [&](int k) {
      EXPECT_EQ(k, static_cast<int>(seen.size()));
      seen.push_back(counting.submitted);
    };
    cholesky::submit_factorisation(counting, tiles, solve, {}, schedule);
    std::vector<std::size_t> expected;
    std::size_t total = 0;
    for (int k = 0; k < nt; ++k) {
      // potrf, then trsm (or a trtri, and trmm per row) and syrk per row, gemm per pair
      const std::size_t below = nt - k - 1;
      total += 1 + (inverse && below > 0 ? 1 : 0) + 2 * below + below * (below - 1) / 2;
      expected.push_back(total);
    }
    EXPECT_EQ(seen, expected) << inverse;
    EXPECT_EQ(total, cholesky::task_counts(nt, solve).total()) << inverse;
  }
}

}  // namespace
