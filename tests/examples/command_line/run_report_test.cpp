// What the example tools report of a run (examples/common/run_report.hpp): one run's task
// statistics out of a runtime that served several, and the CUDA settings a RESULT line names.
#include "run_report.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/scoped_environment.hpp"

namespace {

// A tool reports one run of several on the same runtime: the task statistics since a snapshot.
TEST(RunReport, TaskStatisticsSinceASnapshotAreThoseOfTheTasksAfterIt) {
  versa::Config config;
  config.cpu_workers = 1;
  config.quiet = true;
  config.task_statistics = true;
  versa::Runtime rt{config};
  int x = 0;
  auto hx = rt.data(x);
  const auto bump = versa::task_type("bump").cpu([](versa::Span<int> v) { ++v[0]; });
  for (int i = 0; i < 3; ++i) rt.submit(bump, versa::write(hx));
  rt.wait_all();
  const std::vector<versa::TaskStatistics> before = rt.task_statistics();
  for (int i = 0; i < 2; ++i) rt.submit(bump, versa::write(hx));
  rt.submit(
      "other", [](versa::Span<int> v) { ++v[0]; }, versa::write(hx));
  rt.wait_all();
  const std::vector<versa::TaskStatistics> since = example::task_statistics_since(rt, before);
  EXPECT_EQ(example::task_statistics_of(since, "bump", "cpu").tasks, 2u);
  EXPECT_EQ(example::task_statistics_of(since, "other", "cpu").tasks, 1u);
  EXPECT_EQ(example::task_statistics_of(since, "bump", "emulated").tasks, 0u);
  EXPECT_LE(example::task_statistics_of(since, "bump", "cpu").kernel_seconds,
            example::task_statistics_of(rt.task_statistics(), "bump", "cpu").kernel_seconds);
  const std::vector<std::string> kinds = example::kinds_that_ran(since, {{"bump", "bump"}});
  EXPECT_EQ(kinds, std::vector<std::string>{"cpu"});
}

// A RESULT line names the CUDA settings the environment changed, when a GPU ran: runs under
// different settings do not share a key; without a GPU they do not matter.
TEST(RunReport, CudaSettingsNameWhatDiffersFromTheDefaults) {
  using versa::testing_support::ScopedEnvironment;
  const ScopedEnvironment no_streams("VERSA_CUDA_STREAMS", nullptr);
  const ScopedEnvironment no_priority("VERSA_CUDA_PRIORITY_STREAMS", nullptr);
  const ScopedEnvironment no_tasks_per_stream("VERSA_DEVICE_TASKS_PER_STREAM", nullptr);
  const ScopedEnvironment no_pool("VERSA_CUDA_MEMORY_POOL", nullptr);
  const ScopedEnvironment no_serial("VERSA_DEVICE_SERIAL_TYPES", nullptr);
  const ScopedEnvironment no_panel("VERSA_CUDA_PANEL_SMS", nullptr);
  std::vector<versa::DeviceStatistics> gpu(2), emulated(2);
  gpu[0].name = emulated[0].name = "cpu";
  gpu[1].name = "cuda:0 (NVIDIA H200)";
  emulated[1].name = "emulated:0";
  const versa::Config config;
  EXPECT_EQ(example::cuda_settings(config, gpu), "");
  {
    const ScopedEnvironment streams("VERSA_CUDA_STREAMS", "8");
    const ScopedEnvironment priority("VERSA_CUDA_PRIORITY_STREAMS", "0");
    const ScopedEnvironment tasks_per_stream("VERSA_DEVICE_TASKS_PER_STREAM", "1");
    const ScopedEnvironment pool("VERSA_CUDA_MEMORY_POOL", "0");
    const ScopedEnvironment serial("VERSA_DEVICE_SERIAL_TYPES", "gemm,syrk");
    EXPECT_EQ(example::cuda_settings(config, gpu),
              ",streams=8,priority_streams=off,memory_pool=off,tasks_per_stream=1,"
              "serial_types=gemm+syrk");
    EXPECT_EQ(example::cuda_settings(config, emulated), "");
  }
  {
    const ScopedEnvironment panel("VERSA_CUDA_PANEL_SMS", "32");
    EXPECT_EQ(example::cuda_settings(config, gpu), ",panel_sms=32");
    EXPECT_EQ(example::cuda_settings(config, emulated), "");
  }
  versa::Config two_streams;
  two_streams.cuda_streams = 2;
  EXPECT_EQ(example::cuda_settings(two_streams, gpu), ",streams=2");
}

}  // namespace
