// The fuzz tests: random programs (support/fuzz_program.hpp) run under Versa on 1 to 8 workers,
// with every scheduling option, on emulated devices (on their streams, or at launch as CUDA host
// code runs; with and without peer links and high-priority streams) and on a device kind
// registered by the tests, each against its sequential run.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/config.hpp"
#include "support/fuzz_program.hpp"
#include "versa/versa.hpp"

namespace {

using namespace versa::fuzz;

// The parallel run, which must report a failure exactly when the program has one.
Outcome run(const Program& program, const versa::Config& config) {
  Outcome outcome = parallel(program, config);
  EXPECT_EQ(!outcome.reported.empty(), has_failures(program)) << outcome.reported;
  return outcome;
}

// Every handle failed in both executions, or valid in both with the same values; every task
// that ran observed what it observed sequentially.
void expect_same_outcome(const Outcome& actual, const Outcome& expected, std::uint64_t seed) {
  ASSERT_EQ(actual.failed, expected.failed) << "seed " << seed;
  for (std::size_t h = 0; h < expected.failed.size(); ++h) {
    if (expected.failed[h]) continue;
    for (int k = 0; k < width; ++k)
      ASSERT_EQ(actual.data[h * width + k], expected.data[h * width + k])
          << "seed " << seed << ", handle " << h << ", value " << k;
  }
  ASSERT_EQ(actual.observed, expected.observed) << "seed " << seed;
}

class Fuzz : public testing::TestWithParam<int> {};

TEST_P(Fuzz, RandomProgramsMatchSequentialExecution) {
  const int workers = GetParam();
  std::uint64_t renamed = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const int handles = seed % 2 ? 16 : 48;
    const Program program = random_program(seed * 7919 + workers, 2000, handles);
    const Outcome expected = sequential(program);
    const Outcome actual = run(program, versa::testing::workers(workers));
    ASSERT_EQ(actual.data, expected.data) << "seed " << seed;
    ASSERT_EQ(actual.observed, expected.observed) << "seed " << seed;
    renamed += actual.renamed;
  }
  EXPECT_GT(renamed, 100u);  // the write_onlys were renamed, not only ordered
}

// `programs` random programs of 2000 tasks over 16 or 48 handles, picked by `salt` and the
// number of workers, end under `config` as they do run sequentially.
void expect_like_sequential(const versa::Config& config, std::uint64_t salt, int programs) {
  for (std::uint64_t seed = 1; seed <= static_cast<std::uint64_t>(programs); ++seed) {
    const Program program = random_program(
        seed * salt + static_cast<std::uint64_t>(config.cpu_workers), 2000, seed % 2 ? 16 : 48);
    const Outcome expected = sequential(program);
    const Outcome actual = run(program, config);
    ASSERT_EQ(actual.data, expected.data) << "seed " << seed;
    ASSERT_EQ(actual.observed, expected.observed) << "seed " << seed;
  }
}

TEST_P(Fuzz, RandomProgramsMatchSequentialExecutionWhenOnlyWorkerThreadsRunTasks) {
  versa::Config config = versa::testing::workers(GetParam());
  config.caller_runs_tasks = false;
  expect_like_sequential(config, 104729, 4);
}

// The smallest window: the submitting thread runs ready tasks inside submit() whenever 64 wait.
TEST_P(Fuzz, RandomProgramsMatchSequentialExecutionWithTheSmallestSubmissionWindow) {
  versa::Config config = versa::testing::workers(GetParam());
  config.submission_window = 64;
  expect_like_sequential(config, 1299709, 4);
}

// Registration handed to idle workers (DDAST): the main program only queues its tasks.
TEST_P(Fuzz, RandomProgramsMatchSequentialExecutionWithRegistrationHandedToWorkers) {
  for (bool caller : {true, false}) {
    versa::Config config = versa::testing::deferring(versa::testing::workers(GetParam()));
    config.caller_runs_tasks = caller;
    expect_like_sequential(config, caller ? 179424673 : 32452843, 3);
    if (testing::Test::HasFatalFailure()) return;
  }
}

TEST_P(Fuzz, RandomProgramsMatchSequentialExecutionWithLocality) {
  const int workers = GetParam();
  for (bool caller : {false, true}) {
    versa::Config config = versa::testing::workers(workers);
    config.locality = true;
    config.caller_runs_tasks = caller;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const Program program = random_program(seed * 15485863 + workers, 2000, seed % 2 ? 16 : 48);
      const Outcome expected = sequential(program);
      const Outcome actual = run(program, config);
      ASSERT_EQ(actual.data, expected.data) << "seed " << seed << ", caller " << caller;
      ASSERT_EQ(actual.observed, expected.observed) << "seed " << seed << ", caller " << caller;
    }
  }
}

// Failures spread only along the data flow, the same way whatever the timing. Across the seeds,
// some tasks are cancelled and some handles end failed, others valid (the rule is exercised,
// not everything spoilt).
void check_failure_fuzz(const versa::Config& config, std::uint64_t salt, int tasks) {
  int cancelled = 0, failed = 0, valid = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const int handles = seed % 2 ? 16 : 48;
    const Program program = random_program(seed * 6151 + salt, tasks, handles, 200);
    const Outcome expected = sequential(program);
    const Outcome actual = run(program, config);
    expect_same_outcome(actual, expected, seed);
    if (testing::Test::HasFatalFailure()) return;
    cancelled += expected.cancelled;
    for (bool f : expected.failed) (f ? failed : valid) += 1;
  }
  EXPECT_GT(cancelled, 10);
  EXPECT_GT(failed, 4);
  EXPECT_GT(valid, 4);
}

TEST_P(Fuzz, InjectedFailuresSpreadAsInTheSequentialModel) {
  const int workers = GetParam();
  check_failure_fuzz(versa::testing::workers(workers), workers, 1500);
}

TEST_P(Fuzz, InjectedFailuresSpreadAsInTheSequentialModelWithRegistrationHandedToWorkers) {
  const int workers = GetParam();
  check_failure_fuzz(versa::testing::deferring(versa::testing::workers(workers)), workers + 7,
                     1500);
}

INSTANTIATE_TEST_SUITE_P(Workers, Fuzz, testing::Values(1, 2, 4, 8));

struct DeviceSet {
  int workers;
  int devices;
  std::size_t memory_bytes;  // per device
  // "emulated", or a kind registered by the tests (tests/device/loopback_device_test.cpp).
  const char* kind = "emulated";
  // Emulated bodies run on the device's worker thread at launch, as CUDA host code does.
  bool bodies_at_launch = false;
  // The emulated devices have peer links: data moves between them without the host.
  bool peer_links = false;
  // The emulated devices have high-priority streams, where the tasks of priority 1 run.
  bool priority_streams = false;
  // Config::device_tasks_per_stream: 1 makes tasks whose data is there wait for a stream.
  int tasks_per_stream = 2;
  // Config::device_serial_types names the programs' tasks ("task"): they run one after another
  // on each device's first stream, their children ("child") on the others.
  bool serial_tasks = false;
  // With priority_streams: their kernels run on an engine of their own
  // (EmulatedDeviceConfig::panel_kernels), as on a GPU split by Config::cuda_panel_sms.
  bool panel_engine = false;
};

versa::Config device_config(const DeviceSet& set) {
  versa::Config cpus = versa::testing::workers(set.workers);
  cpus.device_tasks_per_stream = set.tasks_per_stream;
  if (set.serial_tasks) cpus.device_serial_types = {"task"};
  if (std::string(set.kind) == "emulated") {
    versa::Config config = versa::testing::with_emulated(cpus, set.devices, set.memory_bytes);
    for (versa::EmulatedDeviceConfig& device : config.emulated_devices) {
      device.bodies_at_launch = set.bodies_at_launch;
      device.peer_link = set.peer_links;
      device.priority_streams = set.priority_streams;
      device.panel_kernels = set.panel_engine ? 1 : 0;
      device.peer_bandwidth_bytes_per_s = 0;
      device.peer_latency_s = 0;
    }
    return config;
  }
  versa::Config config = cpus;
  config.other_devices[set.kind] = set.devices;
  config.device_memory_limit = set.memory_bytes;
  return config;
}

class DeviceFuzz : public testing::TestWithParam<DeviceSet> {};

TEST_P(DeviceFuzz, RandomProgramsWithRandomPlacementMatchSequentialExecution) {
  const DeviceSet set = GetParam();
  const versa::Config config = device_config(set);
  std::uint64_t renamed = 0;
  std::uint64_t from_peers = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const int handles = seed % 2 ? 16 : 48;
    const Program program = random_program(seed * 104729 + set.devices, 1000, handles);
    const Outcome expected = sequential(program);
    const Outcome actual = run(program, config);
    ASSERT_EQ(actual.data, expected.data) << "seed " << seed;
    ASSERT_EQ(actual.observed, expected.observed) << "seed " << seed;
    // The devices were really used, and with little memory, really evicted (the more devices,
    // the smaller each one's share; a slow build, with sanitizers, gives the CPUs more).
    ASSERT_EQ(actual.statistics.size(), static_cast<std::size_t>(set.devices) + 1);
    const std::uint64_t share = 50u / static_cast<std::uint64_t>(set.devices);
    for (int d = 1; d <= set.devices; ++d) {
      EXPECT_GT(actual.statistics[d].tasks, share) << actual.statistics[d].name;
      EXPECT_GT(actual.statistics[d].bytes_to_device, 0u);
      EXPECT_GT(actual.statistics[d].bytes_to_host, 0u);
      from_peers += actual.statistics[d].bytes_from_peers;
      if (set.memory_bytes < 1024) {
        EXPECT_GT(actual.statistics[d].evictions, set.devices <= 2 ? 50u : 10u);
      }
    }
    EXPECT_GT(actual.statistics[0].tasks, 50u);
    renamed += actual.renamed;
  }
  EXPECT_GT(renamed, 50u);  // renamed instances on the devices too
  // Data moved between devices directly exactly when they have peer links.
  if (set.peer_links) {
    EXPECT_GT(from_peers, 0u);
  } else {
    EXPECT_EQ(from_peers, 0u);
  }
}

// Sums of several element types in one program: random adds (through each type's own sum
// operator, bound by the task type) and readers, placed at random, against the sequential sums.
// Values are small integers, so float and double sums are exact too. Each program also submits
// adds with an operator of another type of the same size (float into int32_t, double into
// int64_t, int64_t into double): refused at submit, and nothing is lost.
template <class T>
struct TypedSums {
  static constexpr int blocks = 3;
  static constexpr int width = 4;
  std::vector<T> data = std::vector<T>(blocks * width, T{0});
  std::vector<T> expected = std::vector<T>(blocks * width, T{0});
  std::vector<T> observed, observed_expected;
  std::vector<versa::Handle<T>> handles;

  void open(versa::Runtime& rt) {
    for (int b = 0; b < blocks; ++b) handles.push_back(rt.data(&data[b * width], width));
  }
  // One random step: an add (3 in 4) or a reader of a block.
  void step(versa::Runtime& rt, std::mt19937_64& rng) {
    static constexpr versa::Placement rules[] = {
        versa::Placement::automatic, versa::Placement::cpu_only, versa::Placement::gpu_only,
        versa::Placement::prefer_gpu};
    const int b = static_cast<int>(rng() % blocks);
    if (rng() % 4 != 0) {
      const T v = static_cast<T>(rng() % 100);
      // The operator comes with the task type, as a program's library would give it.
      auto add = versa::task_type("typed add")
                     .cpu([v](versa::Span<T> x) {
                       for (T& e : x) e += v;
                     })
                     .reduction(versa::sum<T>())
                     .placement(rules[rng() % 4]);
      rt.submit(add, versa::add(handles[b]));
      for (int k = 0; k < width; ++k) expected[b * width + k] += v;
    } else {
      observed.push_back(T{-1});
      T* out = &observed.back();
      rt.submit(
          "typed read", [out](versa::Span<const T> x) { *out = x[width - 1]; },
          versa::placement(rules[rng() % 4]), versa::read(handles[b]));
      observed_expected.push_back(expected[b * width + width - 1]);
    }
  }
  template <class Wrong>
  void refuse(versa::Runtime& rt) {
    auto wrong = versa::task_type("wrong add")
                     .cpu([](versa::Span<T>) { ADD_FAILURE() << "a refused add ran"; })
                     .reduction(versa::sum<Wrong>());
    static_assert(sizeof(Wrong) == sizeof(T));
    EXPECT_THROW(rt.submit(wrong, versa::add(handles[0])), std::invalid_argument);
  }
};

TEST_P(DeviceFuzz, TypedSumsOfSeveralElementTypesMatchSequentialSums) {
  const versa::Config config = device_config(GetParam());
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    std::mt19937_64 rng(seed);
    TypedSums<std::int32_t> i32;
    TypedSums<std::int64_t> i64;
    TypedSums<float> f32;
    TypedSums<double> f64;
    // Readers record into these vectors: room for every step, so that no pointer moves.
    i32.observed.reserve(400);
    i64.observed.reserve(400);
    f32.observed.reserve(400);
    f64.observed.reserve(400);
    {
      versa::Runtime rt{config};
      i32.open(rt);
      i64.open(rt);
      f32.open(rt);
      f64.open(rt);
      for (int i = 0; i < 400; ++i) {
        switch (rng() % 4) {
          case 0:
            i32.step(rt, rng);
            break;
          case 1:
            i64.step(rt, rng);
            break;
          case 2:
            f32.step(rt, rng);
            break;
          default:
            f64.step(rt, rng);
        }
        if (i == 200) {
          i32.refuse<float>(rt);
          i64.refuse<double>(rt);
          f64.refuse<std::int64_t>(rt);
        }
      }
      rt.wait_all();
    }
    EXPECT_EQ(i32.data, i32.expected) << "seed " << seed;
    EXPECT_EQ(i64.data, i64.expected) << "seed " << seed;
    EXPECT_EQ(f32.data, f32.expected) << "seed " << seed;
    EXPECT_EQ(f64.data, f64.expected) << "seed " << seed;
    EXPECT_EQ(i32.observed, i32.observed_expected) << "seed " << seed;
    EXPECT_EQ(i64.observed, i64.observed_expected) << "seed " << seed;
    EXPECT_EQ(f32.observed, f32.observed_expected) << "seed " << seed;
    EXPECT_EQ(f64.observed, f64.observed_expected) << "seed " << seed;
  }
}

TEST_P(DeviceFuzz, InjectedFailuresSpreadAsInTheSequentialModel) {
  const DeviceSet set = GetParam();
  check_failure_fuzz(device_config(set), set.devices * 31 + set.workers, 800);
}

// 4 blocks of 64 bytes fill a 256-byte device: every task with several accesses evicts.
INSTANTIATE_TEST_SUITE_P(
    EmulatedDevices, DeviceFuzz,
    testing::Values(DeviceSet{2, 1, 256}, DeviceSet{2, 2, 256}, DeviceSet{1, 2, 1 << 20},
                    DeviceSet{4, 1, 320}, DeviceSet{2, 2, 256, "loopback"},
                    DeviceSet{2, 2, 256, "emulated", true, false, true, 1},
                    DeviceSet{2, 2, 256, "emulated", false, true, false, 1},
                    DeviceSet{2, 3, 320, "emulated", true, true, false, 3},
                    DeviceSet{1, 4, 1 << 20, "emulated", false, true, true},
                    DeviceSet{2, 2, 256, "emulated", true, false, true, 1, true},
                    DeviceSet{2, 1, 320, "emulated", false, false, false, 2, true},
                    DeviceSet{2, 2, 256, "emulated", false, true, true, 2, false, true}),
    [](const testing::TestParamInfo<DeviceSet>& info) {
      return std::string(info.param.kind) + "_" + std::to_string(info.param.workers) + "cpu_" +
             std::to_string(info.param.devices) + "dev_" + std::to_string(info.param.memory_bytes) +
             "B" + (info.param.bodies_at_launch ? "_at_launch" : "") +
             (info.param.peer_links ? "_peer" : "") +
             (info.param.priority_streams ? "_priority" : "") +
             (info.param.tasks_per_stream != 2
                  ? "_" + std::to_string(info.param.tasks_per_stream) + "per_stream"
                  : "") +
             (info.param.serial_tasks ? "_serial" : "") +
             (info.param.panel_engine ? "_panel_engine" : "");
    });

}  // namespace
