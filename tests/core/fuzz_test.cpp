// Randomised programs: thousands of tasks over tens of handles with random access modes, random
// durations and nested tasks. Every run must leave exactly the data, and let every task observe
// exactly the values, of a sequential execution of the same program. With emulated devices,
// each task also gets a random placement rule, and device memory is so small that replicas are
// evicted constantly; a task with children may run on a device, where it creates handles, spawns,
// syncs and destroys the handles inside its body (bodies on the stream threads, or at launch on
// the device's worker thread as CUDA host code runs).
//
// Each handle is a block of `width` values: a task updates the first and derives the others from
// it, and observes the first and the last, so a copy that moved part of a block shows.
//
// Updates are chosen so that any ordering mistake shows: `write` mixes the old value with what
// the task read (not commutative), `write_only` ignores the old value, `commute` adds to the
// first value (commutative, so any order within their run is correct), `add` adds to every
// value, through the handle's sum operator (renamed adds see a partial, not the data), and
// `multiply`, a user-defined mode (a second commuting group), multiplies the first value by an
// odd number. A write_only registered while its handle is in use is renamed.
//
// With failure injection, some tasks throw (before or after updating their data), and the
// sequential model applies the failure rule of access_mode.hpp: a task is cancelled when a
// read, write or commute finds its handle failed (a commute: failed before its run began); a
// failed or cancelled task leaves what it modifies failed; a write_only that runs makes its
// handle valid. Every handle must end failed in both executions, or valid with the same value.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using Value = std::uint64_t;
using versa::AccessMode;

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL + (a << 6) + (a >> 2));
  x ^= x >> 31;
  return x * 0xBF58476D1CE4E5B9ULL;
}

// Multiplications commute with each other, not with commute's additions: a run of their own.
constexpr versa::AccessType multiply{.reorderable = true, .group = 1};
constexpr AccessMode multiply_mode = multiply.mode();

struct AccessSpec {
  int handle;
  AccessMode mode;
};

constexpr int width = 8;

// Where an injected failure strikes: before the task touches its data, or after.
enum class Failing { no, before_updates, after_updates };

struct TaskSpec {
  int id = 0;
  std::vector<AccessSpec> accesses;
  int spin_ns = 0;
  versa::Placement placement = versa::Placement::cpu_only;
  Failing fails = Failing::no;
  // Children: spawned over the task's private handles, then folded into its first write.
  std::vector<TaskSpec> children;
};

constexpr int private_handles = 3;

// The effect of one task on the values it accesses, in access order. Returns what it observed.
Value apply(const TaskSpec& task, Value* const* values) {
  Value observed = mix(task.id, 0);
  for (std::size_t i = 0; i < task.accesses.size(); ++i) {
    const AccessMode mode = task.accesses[i].mode;
    if (mode == AccessMode::read || mode == AccessMode::write)
      observed = mix(mix(observed, values[i][0]), values[i][width - 1]);
  }
  for (std::size_t i = 0; i < task.accesses.size(); ++i) {
    Value& v = *values[i];
    switch (task.accesses[i].mode) {
      case AccessMode::read:
        break;
      case AccessMode::write:
        v = mix(v, observed + i);
        break;
      case AccessMode::write_only:
        v = observed ^ i;
        break;
      case AccessMode::commute:
        v += (observed | 1) * (i + 1);
        break;
      case AccessMode::add:
        for (int k = 0; k < width; ++k) values[i][k] += (observed | 1) * (i + 1) * (k + 1);
        break;
      default:  // multiply
        v *= (observed | 1) * (2 * i + 1);
        break;
    }
    if (modifies(task.accesses[i].mode) && task.accesses[i].mode != AccessMode::add)
      for (int k = 1; k < width; ++k) values[i][k] = mix(v, k);
  }
  if (task.spin_ns > 0) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(task.spin_ns);
    while (std::chrono::steady_clock::now() < end) {
    }
  }
  return observed;
}

Value fold_children(const std::vector<Value>& locals) {
  Value folded = 0;
  for (Value v : locals) folded = mix(folded, v);
  return folded;
}

// The first write's block after folding the children into its first value.
void fold_into(Value* block, const std::vector<Value>& locals) {
  block[0] = mix(block[0], fold_children(locals));
  for (int k = 1; k < width; ++k) block[k] = mix(block[0], k);
}

// `fail_one_in`: a top-level task fails with probability 1 / fail_one_in (0: none fails).
TaskSpec random_task(std::mt19937_64& rng, int id, int handles, int depth, int fail_one_in = 0) {
  TaskSpec task;
  task.id = id;
  const int count = 1 + static_cast<int>(rng() % 4);
  std::vector<int> chosen;
  while (static_cast<int>(chosen.size()) < std::min(count, handles)) {
    const int h = static_cast<int>(rng() % handles);
    if (std::find(chosen.begin(), chosen.end(), h) == chosen.end()) chosen.push_back(h);
  }
  static constexpr AccessMode modes[] = {
      AccessMode::read,    AccessMode::read, AccessMode::write,      AccessMode::write_only,
      AccessMode::commute, AccessMode::add,  AccessMode::write_only, multiply_mode};
  for (int h : chosen) task.accesses.push_back({h, modes[rng() % 8]});
  if (rng() % 10 == 0) task.spin_ns = static_cast<int>(rng() % 20000);
  static constexpr versa::Placement rules[] = {
      versa::Placement::automatic, versa::Placement::cpu_only, versa::Placement::gpu_only,
      versa::Placement::prefer_gpu};
  task.placement = rules[rng() % 4];
  const bool has_write =
      std::any_of(task.accesses.begin(), task.accesses.end(),
                  [](const AccessSpec& a) { return a.mode == AccessMode::write; });
  if (depth == 0 && has_write && rng() % 8 == 0) {
    const int children = 2 + static_cast<int>(rng() % 5);
    for (int c = 0; c < children; ++c)
      task.children.push_back(random_task(rng, id * 16 + c, private_handles, depth + 1));
  }
  if (depth == 0 && fail_one_in > 0 && rng() % fail_one_in == 0)
    task.fails = rng() % 2 ? Failing::before_updates : Failing::after_updates;
  // Failures spread along the data flow faster than random write_only accesses end them: with
  // failures, some tasks only reset a handle, so that programs keep valid and failed data.
  if (depth == 0 && fail_one_in > 0 && task.fails == Failing::no && task.children.empty() &&
      rng() % 4 == 0)
    task.accesses = {{task.accesses[0].handle, AccessMode::write_only}};
  return task;
}

struct Program {
  int handles = 0;
  std::vector<TaskSpec> tasks;
};

Program random_program(std::uint64_t seed, int tasks, int handles, int fail_one_in = 0) {
  std::mt19937_64 rng(seed);
  Program program;
  program.handles = handles;
  for (int i = 0; i < tasks; ++i)
    program.tasks.push_back(random_task(rng, i, handles, 0, fail_one_in));
  return program;
}

int first_write(const TaskSpec& task) {
  for (std::size_t i = 0; i < task.accesses.size(); ++i)
    if (task.accesses[i].mode == AccessMode::write) return static_cast<int>(i);
  return -1;
}

struct Outcome {
  std::vector<Value> data;
  std::vector<Value> observed;  // 0 for the tasks that failed or were cancelled
  std::vector<versa::DeviceStatistics> statistics;
  std::vector<bool> failed;   // per handle, at the end
  int cancelled = 0;          // tasks cancelled (counted by the sequential model only)
  std::uint64_t renamed = 0;  // write_only accesses renamed (by the runtime only)
};

Value initial_value(int h, int k) { return mix(h, 12345 + k); }

std::vector<Value> initial_data(int handles) {
  std::vector<Value> data(static_cast<std::size_t>(handles) * width);
  for (int h = 0; h < handles; ++h)
    for (int k = 0; k < width; ++k) data[h * width + k] = initial_value(h, k);
  return data;
}

// --- Sequential reference ------------------------------------------------------------------

void run_sequentially(const TaskSpec& task, std::vector<Value>& data, Value& observed) {
  std::vector<Value*> values;
  for (const AccessSpec& a : task.accesses) values.push_back(&data[a.handle * width]);
  observed = apply(task, values.data());
  if (!task.children.empty()) {
    std::vector<Value> locals(private_handles * width, 0);
    for (const TaskSpec& child : task.children) {
      Value ignored;
      run_sequentially(child, locals, ignored);
    }
    if (const int w = first_write(task); w >= 0) fold_into(values[w], locals);
  }
}

// The failure state of one handle in the sequential model.
struct HandleFailure {
  bool failed = false;
  bool failed_before_run = false;           // when the current run of commutes or adds began
  AccessMode run_mode = AccessMode::write;  // write: no run of commutes or adds open
};

// Whether `task` is cancelled, as the failure rule says, given the handles' states; advances
// the run bookkeeping of the handles it accesses.
bool cancelled_by_failures(const TaskSpec& task, std::vector<HandleFailure>& handles) {
  bool cancelled = false;
  for (const AccessSpec& a : task.accesses) {
    HandleFailure& h = handles[a.handle];
    if (!is_unordered(a.mode)) {
      h.run_mode = AccessMode::write;
    } else if (h.run_mode != a.mode) {
      h.run_mode = a.mode;
      h.failed_before_run = h.failed;
    }
    // A run of commutes (or multiplications) reads what was there before the run.
    if (reads_contents(a.mode)) cancelled |= is_unordered(a.mode) ? h.failed_before_run : h.failed;
  }
  return cancelled;
}

Outcome sequential(const Program& program) {
  Outcome outcome{initial_data(program.handles),
                  std::vector<Value>(program.tasks.size()),
                  {},
                  std::vector<bool>(program.handles),
                  0};
  std::vector<HandleFailure> handles(program.handles);
  for (const TaskSpec& task : program.tasks) {
    const bool cancelled = cancelled_by_failures(task, handles);
    outcome.cancelled += cancelled;
    if (cancelled || task.fails != Failing::no) {
      for (const AccessSpec& a : task.accesses)
        if (modifies(a.mode)) handles[a.handle].failed = true;
      continue;
    }
    run_sequentially(task, outcome.data, outcome.observed[task.id]);
    for (const AccessSpec& a : task.accesses)
      if (overwrites(a.mode)) handles[a.handle].failed = false;
  }
  for (int h = 0; h < program.handles; ++h) outcome.failed[h] = handles[h].failed;
  return outcome;
}

// --- Versa ----------------------------------------------------------------------------------

// The fuzzer drives the modes at run time, so it builds accesses directly with a read-only view
// type for every mode and writes through the pointers of the modifying ones (a typed program
// would use read()/write()/..., which fix the view type at compile time).
using AnyAccess = versa::Access<versa::Span<const Value>>;

void submit(versa::Runtime& rt, const TaskSpec& task,
            const std::vector<versa::Handle<Value>>& handles, Value* observed, bool child,
            bool devices) {
  std::vector<AnyAccess> accesses;
  for (const AccessSpec& a : task.accesses)
    accesses.push_back({versa::detail::state_of(handles[a.handle]), a.mode});
  auto body = [&rt, &task, observed](auto... views) {
    Value* values[] = {const_cast<Value*>(views.data())...};
    if (task.fails == Failing::before_updates) throw std::runtime_error("injected failure");
    const Value seen = apply(task, values);
    if (task.fails == Failing::after_updates) throw std::runtime_error("injected failure");
    if (observed) *observed = seen;
    if (!task.children.empty()) {
      std::vector<Value> locals(private_handles * width, 0);
      std::vector<versa::Handle<Value>> local_handles;
      for (int h = 0; h < private_handles; ++h)
        local_handles.push_back(rt.data(&locals[h * width], width));
      for (auto& h : local_handles) h.set_reduction(versa::sum<Value>());
      for (const TaskSpec& c : task.children) submit(rt, c, local_handles, nullptr, true, false);
      rt.sync();
      local_handles.clear();  // applies the children's adds to `locals`
      // Children exist only under a task with a write (random_task).
      if (const int w = first_write(task); w >= 0) fold_into(values[w], locals);
    }
  };
  const auto where = versa::placement(devices ? task.placement : versa::Placement::cpu_only);
  auto go = [&](auto... a) {
    if (child) {
      rt.spawn("child", body, a...);
    } else {
      rt.submit("task", body, where, a...);
    }
  };
  switch (accesses.size()) {
    case 1:
      go(accesses[0]);
      break;
    case 2:
      go(accesses[0], accesses[1]);
      break;
    case 3:
      go(accesses[0], accesses[1], accesses[2]);
      break;
    case 4:
      go(accesses[0], accesses[1], accesses[2], accesses[3]);
      break;
    default:
      FAIL() << "unexpected access count";
  }
}

Outcome parallel(const Program& program, versa::Config config) {
  versa::Runtime rt{config};
  const bool devices = !config.emulated_devices.empty() || !config.other_devices.empty();
  Outcome outcome{initial_data(program.handles),
                  std::vector<Value>(program.tasks.size()),
                  {},
                  std::vector<bool>(program.handles),
                  0};
  std::vector<versa::Handle<Value>> handles;
  for (int h = 0; h < program.handles; ++h) {
    handles.push_back(rt.data(&outcome.data[h * width], width));
    handles.back().set_reduction(versa::sum<Value>());
  }
  for (const TaskSpec& task : program.tasks)
    submit(rt, task, handles, &outcome.observed[task.id], false, devices);
  const bool any_fails = std::any_of(program.tasks.begin(), program.tasks.end(),
                                     [](const TaskSpec& t) { return t.fails != Failing::no; });
  try {
    rt.wait_all();
    EXPECT_FALSE(any_fails) << "wait_all did not report the injected failures";
  } catch (const versa::TaskFailure& failure) {
    EXPECT_TRUE(any_fails) << failure.what();
  }
  // A handle is failed when reading it reports the failure.
  for (int h = 0; h < program.handles; ++h) {
    try {
      (void)rt.acquire(versa::read(handles[h]));
    } catch (const versa::TaskFailure&) {
      outcome.failed[h] = true;
    }
  }
  outcome.statistics = rt.statistics();
  outcome.renamed = rt.renamed_accesses();
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
    const Outcome actual = parallel(program, versa::testing::workers(workers));
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
    const Outcome actual = parallel(program, config);
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
      const Outcome actual = parallel(program, config);
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
    const Outcome actual = parallel(program, config);
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
};

versa::Config device_config(const DeviceSet& set) {
  const versa::Config cpus = versa::testing::workers(set.workers);
  if (std::string(set.kind) == "emulated") {
    versa::Config config = versa::testing::with_emulated(cpus, set.devices, set.memory_bytes);
    for (versa::EmulatedDeviceConfig& device : config.emulated_devices)
      device.bodies_at_launch = set.bodies_at_launch;
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
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const int handles = seed % 2 ? 16 : 48;
    const Program program = random_program(seed * 104729 + set.devices, 1000, handles);
    const Outcome expected = sequential(program);
    const Outcome actual = parallel(program, config);
    ASSERT_EQ(actual.data, expected.data) << "seed " << seed;
    ASSERT_EQ(actual.observed, expected.observed) << "seed " << seed;
    // The devices were really used, and with little memory, really evicted.
    ASSERT_EQ(actual.statistics.size(), static_cast<std::size_t>(set.devices) + 1);
    for (int d = 1; d <= set.devices; ++d) {
      EXPECT_GT(actual.statistics[d].tasks, 50u) << actual.statistics[d].name;
      EXPECT_GT(actual.statistics[d].bytes_to_device, 0u);
      EXPECT_GT(actual.statistics[d].bytes_to_host, 0u);
      if (set.memory_bytes < 1024) {
        EXPECT_GT(actual.statistics[d].evictions, 50u);
      }
    }
    EXPECT_GT(actual.statistics[0].tasks, 50u);
    renamed += actual.renamed;
  }
  EXPECT_GT(renamed, 50u);  // renamed instances on the devices too
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
INSTANTIATE_TEST_SUITE_P(EmulatedDevices, DeviceFuzz,
                         testing::Values(DeviceSet{2, 1, 256}, DeviceSet{2, 2, 256},
                                         DeviceSet{1, 2, 1 << 20}, DeviceSet{4, 1, 320},
                                         DeviceSet{2, 2, 256, "loopback"},
                                         DeviceSet{2, 2, 256, "emulated", true}),
                         [](const testing::TestParamInfo<DeviceSet>& info) {
                           return std::string(info.param.kind) + "_" +
                                  std::to_string(info.param.workers) + "cpu_" +
                                  std::to_string(info.param.devices) + "dev_" +
                                  std::to_string(info.param.memory_bytes) + "B" +
                                  (info.param.bodies_at_launch ? "_at_launch" : "");
                         });

}  // namespace
