// What the command-line tools share (examples/common/command_line.hpp): the --devices list and
// one run's task statistics. The parser's own rules: command_line/option_parser_test.cpp.
#include "command_line.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/scoped_environment.hpp"

namespace {

// A tool with the shared --devices option, as the tools add it.
struct Tool {
  example::OptionParser parser{"tool", "test tool"};
  example::Devices devices;
  std::ostringstream out, err;

  Tool() { example::add_devices_option(parser, devices); }

  std::optional<int> parse(const std::vector<std::string>& args) {
    return parser.parse(args, out, err);
  }
};

TEST(CommandLine, DevicesAreAutoByDefault) {
  Tool tool;
  EXPECT_EQ(tool.parse({}), std::nullopt);
  EXPECT_EQ(tool.devices.list, "auto");
  EXPECT_TRUE(tool.devices.gpu);
  EXPECT_FALSE(tool.devices.gpu_required);
  EXPECT_EQ(tool.devices.emulated, 0);
}

TEST(CommandLine, DevicesListIsRead) {
  Tool tool;
  EXPECT_EQ(tool.parse({"--devices", "cpu,gpu,emulated:2"}), std::nullopt) << tool.err.str();
  EXPECT_EQ(tool.devices.list, "cpu,gpu,emulated:2");
  EXPECT_TRUE(tool.devices.gpu);
  EXPECT_TRUE(tool.devices.gpu_required);
  EXPECT_EQ(tool.devices.emulated, 2);

  const example::Devices cpu = example::parse_devices("cpu");
  EXPECT_FALSE(cpu.accelerators());
  EXPECT_EQ(example::parse_devices("cpu,emulated").emulated, 1);
  EXPECT_EQ(example::parse_devices("cpu,emulated,emulated").emulated, 2) << "one device per item";
  EXPECT_EQ(example::parse_devices("cpu,emulated:2,emulated").emulated, 3);
  EXPECT_FALSE(example::parse_devices("cpu,emulated").gpu);

  // One device per gpu:I item, a GPU possibly named twice.
  const example::Devices twice = example::parse_devices("cpu,gpu:0,gpu:0,emulated:1");
  EXPECT_EQ(twice.gpu_entries, (std::vector<int>{0, 0}));
  EXPECT_TRUE(twice.gpu_required);
  EXPECT_EQ(example::runtime_config(twice, 2, "").cuda_devices, (std::vector<int>{0, 0}));
  EXPECT_TRUE(example::runtime_config(cpu, 2, "").cuda_devices.empty());
}

TEST(CommandLine, BadDevicesAreRefusedNamingTheOptionAndItem) {
  for (const std::string list :
       {"foo", "cpu,fpga", "gpu", "emulated:1", "cpu,emulated:0", "cpu,emulated:x", "cpu,emulated:",
        "cpu,", "", "cpu,gpu:", "cpu,gpu:-1", "cpu,gpu:64", "cpu,gpu:x", "cpu,gpu,gpu:0"}) {
    Tool tool;
    EXPECT_EQ(tool.parse({"--devices", list}), 2) << list;
    const std::string message = tool.err.str();
    EXPECT_NE(message.find("tool: --devices: "), std::string::npos) << message;
  }
  Tool tool;
  tool.parse({"--devices", "cpu,fpga"});
  EXPECT_NE(tool.err.str().find("'fpga'"), std::string::npos) << tool.err.str();
}

// A tool reports one run of several on the same runtime: the task statistics since a snapshot.
TEST(CommandLine, TaskStatisticsSinceASnapshotAreThoseOfTheTasksAfterIt) {
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
TEST(CommandLine, CudaSettingsNameWhatDiffersFromTheDefaults) {
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
