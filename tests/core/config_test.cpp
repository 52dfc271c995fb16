// Config::from_environment: each variable overrides its field, and a bad value, in the
// environment or in the struct, is refused with a message that names the variable or the field.
#include "versa/config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/config.hpp"
#include "support/scoped_environment.hpp"
#include "versa/runtime.hpp"

namespace versa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing_support::ScopedEnvironment;

// Every variable from_environment reads (config.hpp lists them).
constexpr const char* all_variables[] = {
    "VERSA_NCPU",
    "VERSA_PIN",
    "VERSA_TRACE",
    "VERSA_NGPU",
    "VERSA_EMULATED",
    "VERSA_DEVICE_MEMORY",
    "VERSA_PERF_MODEL",
    "VERSA_QUIET",
    "VERSA_STATS",
    "VERSA_SUBMISSION_WINDOW",
    "VERSA_CUDA_DEVICES",
    "VERSA_LINK_COSTS",
    "VERSA_AUTO_PIN",
    "VERSA_CUDA_STREAMS",
    "VERSA_CUDA_PRIORITY_STREAMS",
    "VERSA_DEVICE_TASKS_PER_STREAM",
    "VERSA_CUDA_MEMORY_POOL",
    "VERSA_DEVICE_SERIAL_TYPES",
    "VERSA_CUDA_PANEL_SMS",
};

// Unsets every VERSA_ variable for the test, so that the environment the tests run in (a
// developer's VERSA_NCPU, CI's VERSA_EMULATED) cannot change the results; restores them after.
class ConfigTest : public ::testing::Test {
 protected:
  ConfigTest() {
    for (const char* variable : all_variables)
      cleared_.push_back(std::make_unique<ScopedEnvironment>(variable, nullptr));
  }

  // The what() of the std::invalid_argument that from_environment(base) throws.
  static std::string error_of(const Config& base) {
    try {
      Config::from_environment(base);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "<no exception was thrown>";
  }

 private:
  std::vector<std::unique_ptr<ScopedEnvironment>> cleared_;
};

void expect_default_device(const EmulatedDeviceConfig& device) {
  const EmulatedDeviceConfig defaults;
  EXPECT_EQ(device.memory_bytes, defaults.memory_bytes);
  EXPECT_EQ(device.bandwidth_bytes_per_s, defaults.bandwidth_bytes_per_s);
  EXPECT_EQ(device.latency_s, defaults.latency_s);
  EXPECT_EQ(device.streams, defaults.streams);
  EXPECT_EQ(device.fail_allocations_from, defaults.fail_allocations_from);
  EXPECT_EQ(device.fail_copy_at, defaults.fail_copy_at);
}

TEST_F(ConfigTest, WithoutVariablesTheBaseIsKept) {
  Config base;
  base.cpu_workers = 3;
  base.pin_workers = false;
  base.gpus = 1;
  base.emulated_devices.resize(1);
  base.emulated_devices[0].streams = 5;
  base.device_memory_limit = 1 << 20;
  base.perf_model_file = "model.txt";
  base.trace_file = "trace.json";
  base.quiet = true;
  const Config config = Config::from_environment(base);
  EXPECT_EQ(config.cpu_workers, 3);
  EXPECT_FALSE(config.pin_workers);
  EXPECT_EQ(config.gpus, 1);
  ASSERT_EQ(config.emulated_devices.size(), 1u);
  EXPECT_EQ(config.emulated_devices[0].streams, 5);
  EXPECT_EQ(config.device_memory_limit, std::size_t{1} << 20);
  EXPECT_EQ(config.perf_model_file, "model.txt");
  EXPECT_EQ(config.trace_file, "trace.json");
  EXPECT_TRUE(config.quiet);
}

TEST_F(ConfigTest, EmulatedGivesThatManyDefaultDevices) {
  const ScopedEnvironment variable("VERSA_EMULATED", "2");
  const Config config = Config::from_environment(Config{});
  ASSERT_EQ(config.emulated_devices.size(), 2u);
  for (const EmulatedDeviceConfig& device : config.emulated_devices) expect_default_device(device);
}

TEST_F(ConfigTest, EmulatedZeroRemovesTheDevices) {
  const ScopedEnvironment variable("VERSA_EMULATED", "0");
  Config base;
  base.emulated_devices.resize(3);
  EXPECT_TRUE(Config::from_environment(base).emulated_devices.empty());
}

TEST_F(ConfigTest, NgpuZeroDisablesGpus) {
  const ScopedEnvironment variable("VERSA_NGPU", "0");
  EXPECT_EQ(Config::from_environment(Config{}).gpus, 0);
}

TEST_F(ConfigTest, CudaDevicesListsOrdinalsWithRepeats) {
  const ScopedEnvironment variable("VERSA_CUDA_DEVICES", "0,0,1");
  EXPECT_EQ(Config::from_environment(Config{}).cuda_devices, (std::vector<int>{0, 0, 1}));
}

TEST_F(ConfigTest, CudaStreamsSetsTheKernelStreams) {
  EXPECT_EQ(Config::from_environment(Config{}).cuda_streams, 4);
  const ScopedEnvironment variable("VERSA_CUDA_STREAMS", "8");
  EXPECT_EQ(Config::from_environment(Config{}).cuda_streams, 8);
}

TEST_F(ConfigTest, CudaPriorityStreamsTurnsThemOff) {
  EXPECT_TRUE(Config::from_environment(Config{}).cuda_priority_streams);
  const ScopedEnvironment variable("VERSA_CUDA_PRIORITY_STREAMS", "0");
  EXPECT_FALSE(Config::from_environment(Config{}).cuda_priority_streams);
}

TEST_F(ConfigTest, CudaMemoryPoolTurnsItOff) {
  EXPECT_TRUE(Config::from_environment(Config{}).cuda_memory_pool);
  const ScopedEnvironment variable("VERSA_CUDA_MEMORY_POOL", "0");
  EXPECT_FALSE(Config::from_environment(Config{}).cuda_memory_pool);
}

TEST_F(ConfigTest, CudaPanelSmsSetsThePanelsShare) {
  EXPECT_EQ(Config::from_environment(Config{}).cuda_panel_sms, 0);
  const ScopedEnvironment variable("VERSA_CUDA_PANEL_SMS", "24");
  EXPECT_EQ(Config::from_environment(Config{}).cuda_panel_sms, 24);
}

// The panel's SMs run the high-priority streams: without them there is nothing to run there.
TEST_F(ConfigTest, CudaPanelSmsNeedPriorityStreams) {
  const ScopedEnvironment panel("VERSA_CUDA_PANEL_SMS", "16");
  const ScopedEnvironment priority("VERSA_CUDA_PRIORITY_STREAMS", "0");
  EXPECT_THAT(error_of(Config{}),
              AllOf(HasSubstr("Config::cuda_panel_sms = 16"), HasSubstr("cuda_priority_streams")));
}

TEST_F(ConfigTest, DeviceSerialTypesNamesTheTaskTypes) {
  EXPECT_TRUE(Config::from_environment(Config{}).device_serial_types.empty());
  const ScopedEnvironment variable("VERSA_DEVICE_SERIAL_TYPES", "gemm,syrk");
  EXPECT_EQ(Config::from_environment(Config{}).device_serial_types,
            (std::vector<std::string>{"gemm", "syrk"}));
}

TEST_F(ConfigTest, DeviceTasksPerStreamSetsTheLaunchWindow) {
  EXPECT_EQ(Config::from_environment(Config{}).device_tasks_per_stream, 2);
  const ScopedEnvironment variable("VERSA_DEVICE_TASKS_PER_STREAM", "1");
  EXPECT_EQ(Config::from_environment(Config{}).device_tasks_per_stream, 1);
}

TEST_F(ConfigTest, LinkCostsNamesTheFile) {
  const ScopedEnvironment variable("VERSA_LINK_COSTS", "none");
  EXPECT_EQ(Config::from_environment(Config{}).link_cost_file, "none");
}

TEST_F(ConfigTest, DeviceMemoryIsInMebibytes) {
  const ScopedEnvironment variable("VERSA_DEVICE_MEMORY", "16");
  EXPECT_EQ(Config::from_environment(Config{}).device_memory_limit, std::size_t{16} << 20);
}

TEST_F(ConfigTest, AutoPinIsInKibibytesAndZeroTurnsItOff) {
  EXPECT_EQ(Config::from_environment(Config{}).auto_pin_bytes, std::size_t{256} << 10);
  {
    const ScopedEnvironment variable("VERSA_AUTO_PIN", "1024");
    EXPECT_EQ(Config::from_environment(Config{}).auto_pin_bytes, std::size_t{1} << 20);
  }
  const ScopedEnvironment variable("VERSA_AUTO_PIN", "0");
  EXPECT_EQ(Config::from_environment(Config{}).auto_pin_bytes, 0u);
}

TEST_F(ConfigTest, PerfModelAndQuiet) {
  const std::string model = ::testing::TempDir() + "versa_config_test_model.txt";
  const ScopedEnvironment perf_model("VERSA_PERF_MODEL", model.c_str());
  const ScopedEnvironment quiet("VERSA_QUIET", "1");
  const Config config = Config::from_environment(Config{});
  EXPECT_EQ(config.perf_model_file, model);
  EXPECT_TRUE(config.quiet);

  // 0 turns quiet off even when the base had it on.
  const ScopedEnvironment loud("VERSA_QUIET", "0");
  Config base;
  base.quiet = true;
  EXPECT_FALSE(Config::from_environment(base).quiet);
}

TEST_F(ConfigTest, Statistics) {
  const ScopedEnvironment stats("VERSA_STATS", "1");
  EXPECT_TRUE(Config::from_environment(Config{}).print_statistics);
  const ScopedEnvironment bad("VERSA_STATS", "on");
  EXPECT_THAT([] { (void)Config::from_environment(Config{}); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("VERSA_STATS='on'")));
}

TEST_F(ConfigTest, CpuPinAndTrace) {
  const ScopedEnvironment ncpu("VERSA_NCPU", "7");
  const ScopedEnvironment pin("VERSA_PIN", "0");
  const ScopedEnvironment trace("VERSA_TRACE", "out.json");
  const Config config = Config::from_environment(Config{});
  EXPECT_EQ(config.cpu_workers, 7);
  EXPECT_FALSE(config.pin_workers);
  EXPECT_EQ(config.trace_file, "out.json");
}

struct BadVariable {
  const char* name;  // for the test name
  const char* variable;
  const char* value;
};

class ConfigBadVariableTest : public ConfigTest,
                              public ::testing::WithParamInterface<BadVariable> {};

TEST_P(ConfigBadVariableTest, ThrowsNamingTheVariableAndValue) {
  const ScopedEnvironment variable(GetParam().variable, GetParam().value);
  const std::string message = error_of(Config{});
  EXPECT_THAT(message, HasSubstr(GetParam().variable));
  EXPECT_THAT(message, HasSubstr(std::string("'") + GetParam().value + "'"));
}

INSTANTIATE_TEST_SUITE_P(
    Config, ConfigBadVariableTest,
    ::testing::Values(BadVariable{"EmulatedNegative", "VERSA_EMULATED", "-1"},
                      BadVariable{"EmulatedNotANumber", "VERSA_EMULATED", "abc"},
                      BadVariable{"EmulatedTooMany", "VERSA_EMULATED", "65"},
                      BadVariable{"EmulatedTrailingText", "VERSA_EMULATED", "2x"},
                      BadVariable{"EmulatedEmpty", "VERSA_EMULATED", ""},
                      BadVariable{"DeviceMemoryZero", "VERSA_DEVICE_MEMORY", "0"},
                      BadVariable{"DeviceMemoryHuge", "VERSA_DEVICE_MEMORY", "99999999999"},
                      BadVariable{"NgpuNotANumber", "VERSA_NGPU", "x"},
                      BadVariable{"NgpuNegative", "VERSA_NGPU", "-1"},
                      BadVariable{"CudaDevicesEmpty", "VERSA_CUDA_DEVICES", ""},
                      BadVariable{"CudaDevicesTrailingComma", "VERSA_CUDA_DEVICES", "0,"},
                      BadVariable{"CudaDevicesNegative", "VERSA_CUDA_DEVICES", "0,-1"},
                      BadVariable{"CudaDevicesTooLarge", "VERSA_CUDA_DEVICES", "64"},
                      BadVariable{"CudaDevicesWord", "VERSA_CUDA_DEVICES", "gpu0"},
                      BadVariable{"CudaStreamsZero", "VERSA_CUDA_STREAMS", "0"},
                      BadVariable{"CudaStreamsTooMany", "VERSA_CUDA_STREAMS", "33"},
                      BadVariable{"CudaPriorityStreamsWord", "VERSA_CUDA_PRIORITY_STREAMS", "on"},
                      BadVariable{"CudaMemoryPoolWord", "VERSA_CUDA_MEMORY_POOL", "yes"},
                      BadVariable{"CudaPanelSmsNegative", "VERSA_CUDA_PANEL_SMS", "-8"},
                      BadVariable{"CudaPanelSmsTooMany", "VERSA_CUDA_PANEL_SMS", "1025"},
                      BadVariable{"SerialTypesEmpty", "VERSA_DEVICE_SERIAL_TYPES", ""},
                      BadVariable{"SerialTypesTrailingComma", "VERSA_DEVICE_SERIAL_TYPES", "gemm,"},
                      BadVariable{"SerialTypesEmptyName", "VERSA_DEVICE_SERIAL_TYPES", "a,,b"},
                      BadVariable{"TasksPerStreamZero", "VERSA_DEVICE_TASKS_PER_STREAM", "0"},
                      BadVariable{"TasksPerStreamTooMany", "VERSA_DEVICE_TASKS_PER_STREAM", "17"},
                      BadVariable{"NcpuZero", "VERSA_NCPU", "0"},
                      BadVariable{"PinTwo", "VERSA_PIN", "2"},
                      BadVariable{"QuietWord", "VERSA_QUIET", "yes"},
                      BadVariable{"AutoPinNegative", "VERSA_AUTO_PIN", "-1"},
                      BadVariable{"AutoPinWithUnit", "VERSA_AUTO_PIN", "256K"}),
    [](const ::testing::TestParamInfo<BadVariable>& info) { return info.param.name; });

TEST_F(ConfigTest, FieldsOutOfRangeThrowNamingTheField) {
  Config gpus;
  gpus.gpus = -2;
  EXPECT_THAT(error_of(gpus), HasSubstr("Config::gpus"));

  Config streams;
  streams.cuda_streams = 0;
  EXPECT_THAT(error_of(streams), HasSubstr("Config::cuda_streams"));

  Config tasks_per_stream;
  tasks_per_stream.device_tasks_per_stream = 0;
  EXPECT_THAT(error_of(tasks_per_stream), HasSubstr("Config::device_tasks_per_stream"));
  tasks_per_stream.device_tasks_per_stream = 17;
  EXPECT_THAT(error_of(tasks_per_stream), HasSubstr("Config::device_tasks_per_stream"));

  Config panel;
  panel.cuda_panel_sms = -1;
  EXPECT_THAT(error_of(panel), HasSubstr("Config::cuda_panel_sms = -1 is out of range"));

  Config serial_types;
  serial_types.device_serial_types = {"gemm", ""};
  EXPECT_THAT(error_of(serial_types), HasSubstr("Config::device_serial_types"));

  Config memory;
  memory.device_memory_limit = 10;
  EXPECT_THAT(error_of(memory), HasSubstr("Config::device_memory_limit"));

  Config negative_workers;
  negative_workers.cpu_workers = -1;
  EXPECT_THAT(error_of(negative_workers), HasSubstr("Config::cpu_workers"));

  Config too_many_workers;
  too_many_workers.cpu_workers = 4097;
  EXPECT_THAT(error_of(too_many_workers), HasSubstr("Config::cpu_workers"));

  Config too_many_devices;
  too_many_devices.emulated_devices.resize(65);
  EXPECT_THAT(error_of(too_many_devices), HasSubstr("Config::emulated_devices"));

  Config bad_ordinal;
  bad_ordinal.cuda_devices = {0, -1};
  EXPECT_THAT(error_of(bad_ordinal), HasSubstr("Config::cuda_devices names GPU -1"));

  Config too_many_gpus;
  too_many_gpus.cuda_devices.resize(65);
  EXPECT_THAT(error_of(too_many_gpus), HasSubstr("Config::cuda_devices has 65 entries"));
}

TEST_F(ConfigTest, FieldsAtTheirLimitsAreAccepted) {
  Config config;
  config.gpus = -1;
  config.device_memory_limit = 64;
  config.cpu_workers = 4096;
  config.emulated_devices.resize(64);
  config.device_tasks_per_stream = 16;
  EXPECT_NO_THROW(Config::from_environment(config));
  config.device_tasks_per_stream = 1;
  config.device_memory_limit = 0;  // no limit
  config.gpus = 64;
  config.cpu_workers = 0;  // one per core
  EXPECT_NO_THROW(Config::from_environment(config));
}

// The emulated devices' own fields are checked when the Runtime opens them.
class ConfigEmulatedDeviceTest : public ConfigTest {
 protected:
  static Config one_device(const EmulatedDeviceConfig& device) {
    Config config = testing::workers(1);
    config.gpus = 0;
    config.emulated_devices.push_back(device);
    return config;
  }
  static std::string runtime_error_of(const Config& config) {
    try {
      Runtime runtime(config);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "<no exception was thrown>";
  }
};

TEST_F(ConfigEmulatedDeviceTest, NoStreamsIsRefused) {
  EmulatedDeviceConfig device;
  device.streams = 0;
  EXPECT_THAT(runtime_error_of(one_device(device)),
              HasSubstr("Config::emulated_devices[0].streams"));
}

TEST_F(ConfigEmulatedDeviceTest, ConcurrentKernelsBeyondTheStreamsAreRefused) {
  for (const int kernels : {0, 3}) {
    EmulatedDeviceConfig device;
    device.streams = 2;
    device.concurrent_kernels = kernels;
    EXPECT_THAT(runtime_error_of(one_device(device)),
                HasSubstr("Config::emulated_devices[0].concurrent_kernels = " +
                          std::to_string(kernels) + " is out of range"));
  }
}

TEST_F(ConfigEmulatedDeviceTest, PanelKernelsBeyondTheStreamsOrWithoutPriorityStreamsAreRefused) {
  for (const int kernels : {-1, 3}) {
    EmulatedDeviceConfig device;
    device.streams = 2;
    device.priority_streams = true;
    device.panel_kernels = kernels;
    EXPECT_THAT(runtime_error_of(one_device(device)),
                HasSubstr("Config::emulated_devices[0].panel_kernels = " + std::to_string(kernels) +
                          " is out of range"));
  }
  EmulatedDeviceConfig without;
  without.panel_kernels = 1;
  EXPECT_THAT(runtime_error_of(one_device(without)),
              AllOf(HasSubstr("Config::emulated_devices[0].panel_kernels = 1"),
                    HasSubstr("needs priority_streams")));
}

TEST_F(ConfigEmulatedDeviceTest, ABadPeerLinkIsRefused) {
  EmulatedDeviceConfig slow;
  slow.peer_bandwidth_bytes_per_s = -1;
  EXPECT_THAT(runtime_error_of(one_device(slow)),
              HasSubstr("Config::emulated_devices[0].peer_bandwidth_bytes_per_s"));
  EmulatedDeviceConfig late;
  late.peer_latency_s = 2;
  EXPECT_THAT(runtime_error_of(one_device(late)),
              HasSubstr("Config::emulated_devices[0].peer_latency_s"));
}

TEST_F(ConfigEmulatedDeviceTest, TinyMemoryIsRefused) {
  EmulatedDeviceConfig device;
  device.memory_bytes = 10;
  EXPECT_THAT(runtime_error_of(one_device(device)),
              HasSubstr("Config::emulated_devices[0].memory_bytes"));
}

TEST_F(ConfigEmulatedDeviceTest, SmallestDeviceIsAccepted) {
  EmulatedDeviceConfig device;
  device.streams = 1;
  device.memory_bytes = 64;
  EXPECT_NO_THROW(Runtime runtime(one_device(device)));
}

}  // namespace
}  // namespace versa
