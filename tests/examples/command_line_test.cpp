// What the command-line tools share (examples/common/command_line.hpp): the --devices list and
// the runtime's settings from it. The parser's own rules: command_line/option_parser_test.cpp;
// the figures the tools print: command_line/run_report_test.cpp.
#include "command_line.hpp"

#include <gtest/gtest.h>

#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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

// What a tool's main() (run_tool) returns and prints when its run throws.
struct Ending {
  int status;
  std::string err;
};
template <class Run>
Ending end_of(Run&& run) {
  example::OptionParser parser{"tool", "test tool"};
  char name[] = "tool";
  char* argv[] = {name, nullptr};
  testing::internal::CaptureStderr();
  const int status = example::run_tool(parser, 1, argv, run);
  return {status, testing::internal::GetCapturedStderr()};
}

TEST(CommandLine, ARunThatFailsSaysWhyWithItsStatus) {
  const Ending fine = end_of([] { return 0; });
  EXPECT_EQ(fine.status, 0);
  EXPECT_EQ(fine.err, "");
  const Ending wrong = end_of([]() -> int { throw std::invalid_argument("--n: too small"); });
  EXPECT_EQ(wrong.status, 2);
  EXPECT_NE(wrong.err.find("tool: --n: too small"), std::string::npos) << wrong.err;
  const Ending failed = end_of([]() -> int { throw std::runtime_error("a task failed"); });
  EXPECT_EQ(failed.status, 1);
  EXPECT_EQ(failed.err, "tool: a task failed\n");
  const Ending too_large = end_of([]() -> int { throw std::bad_alloc(); });
  EXPECT_EQ(too_large.status, 1);
  EXPECT_NE(too_large.err.find("tool: out of memory: the problem does not fit"), std::string::npos)
      << too_large.err;
}

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

}  // namespace
