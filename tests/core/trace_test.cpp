// The Chrome trace-event file (DESIGN.md section 7): written when the runtime is destroyed if
// Config::trace_file or VERSA_TRACE names it, with one track per worker and one slice per task
// that ran, a counter of ready tasks, and per device tracks of kernels, copies each way,
// evictions and reduction flushes; nothing is written when tracing is off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "support/config.hpp"
#include "support/scoped_environment.hpp"
#include "support/temporary_path.hpp"
#include "versa/versa.hpp"

namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using versa::testing_support::ScopedEnvironment;
using versa::testing_support::TemporaryPath;

using versa::testing::workers;

// Makes `directory` the working directory for the lifetime of the object.
class ScopedWorkingDirectory {
 public:
  explicit ScopedWorkingDirectory(const fs::path& directory) : previous_(fs::current_path()) {
    fs::current_path(directory);
  }
  ~ScopedWorkingDirectory() { fs::current_path(previous_); }
  ScopedWorkingDirectory(const ScopedWorkingDirectory&) = delete;
  ScopedWorkingDirectory& operator=(const ScopedWorkingDirectory&) = delete;

 private:
  fs::path previous_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t occurrences(std::string_view text, std::string_view pattern) {
  std::size_t count = 0;
  for (std::size_t at = text.find(pattern); at != std::string_view::npos;
       at = text.find(pattern, at + pattern.size()))
    ++count;
  return count;
}

// A strict recogniser of JSON (RFC 8259) text: enough to tell that a trace viewer will parse
// the file, without a JSON library.
class JsonRecogniser {
 public:
  explicit JsonRecogniser(std::string_view text) : text_(text) {}

  bool valid() {
    skip_space();
    if (!value()) return false;
    skip_space();
    return at_ == text_.size();
  }

 private:
  bool value() {
    if (at_ >= text_.size()) return false;
    switch (text_[at_]) {
      case '{':
        return sequence('}', true);
      case '[':
        return sequence(']', false);
      case '"':
        return string();
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  // An object (members "key": value) or an array, after its opening bracket.
  bool sequence(char close, bool members) {
    ++at_;
    skip_space();
    if (peek() == close) return ++at_, true;
    for (;;) {
      skip_space();
      if (members) {
        if (peek() != '"' || !string()) return false;
        skip_space();
        if (peek() != ':') return false;
        ++at_;
        skip_space();
      }
      if (!value()) return false;
      skip_space();
      if (peek() == close) return ++at_, true;
      if (peek() != ',') return false;
      ++at_;
    }
  }

  bool string() {
    ++at_;
    while (at_ < text_.size()) {
      const char c = text_[at_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') continue;
      if (at_ >= text_.size()) return false;
      const char escaped = text_[at_++];
      if (escaped == 'u') {
        for (int i = 0; i < 4; ++i, ++at_)
          if (at_ >= text_.size() || !std::isxdigit(static_cast<unsigned char>(text_[at_])))
            return false;
      } else if (std::string_view("\"\\/bfnrt").find(escaped) == std::string_view::npos) {
        return false;
      }
    }
    return false;
  }

  bool number() {
    const std::size_t start = at_;
    if (peek() == '-') ++at_;
    if (peek() == '0') {
      ++at_;
    } else if (!digits()) {
      return false;
    }
    if (peek() == '.') {
      ++at_;
      if (!digits()) return false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++at_;
      if (peek() == '+' || peek() == '-') ++at_;
      if (!digits()) return false;
    }
    return at_ > start;
  }

  bool digits() {
    const std::size_t start = at_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++at_;
    return at_ > start;
  }

  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  void skip_space() {
    while (at_ < text_.size() &&
           std::string_view(" \t\n\r").find(text_[at_]) != std::string_view::npos)
      ++at_;
  }

  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }

  std::string_view text_;
  std::size_t at_ = 0;
};

bool is_json(std::string_view text) { return JsonRecogniser(text).valid(); }

// The "tid" of every complete ("ph":"X") event; the writer puts one event per line.
std::vector<long> slice_threads(const std::string& trace) {
  std::vector<long> threads;
  std::istringstream lines(trace);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(R"("ph":"X")") == std::string::npos) continue;
    const std::size_t tid = line.find(R"("tid":)");
    threads.push_back(tid == std::string::npos ? -1
                                               : std::strtol(line.c_str() + tid + 6, nullptr, 10));
  }
  return threads;
}

// One event of the trace, from its line: the fields the tests look at (-1 or "" when absent).
struct TraceEvent {
  std::string name;
  std::string phase;
  std::string category;
  long pid = -1;
  long tid = -1;
  double ts = 0;
  std::int64_t bytes = -1;
  std::string handle;
  std::int64_t ready = -1;
  std::string label;  // a metadata event's "args":{"name":...}
};

std::vector<TraceEvent> events_of(const std::string& trace) {
  static const std::regex name(R"re("name":"((?:[^"\\]|\\.)*)")re");
  static const std::regex phase(R"re("ph":"([A-Za-z])")re");
  static const std::regex category(R"re("cat":"([a-z]+)")re");
  static const std::regex pid(R"re("pid":(\d+))re");
  static const std::regex tid(R"re("tid":(\d+))re");
  static const std::regex ts(R"re("ts":(-?[0-9.]+))re");
  static const std::regex bytes(R"re("bytes":(\d+))re");
  static const std::regex handle(R"re("handle":"((?:[^"\\]|\\.)*)")re");
  static const std::regex ready(R"re("ready":(-?\d+))re");
  static const std::regex label(R"re("args":\{"name":"((?:[^"\\]|\\.)*)")re");
  std::vector<TraceEvent> events;
  std::istringstream lines(trace);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, phase)) continue;
    TraceEvent e;
    e.phase = m[1];
    auto text = [&](const std::regex& field, std::string& into) {
      if (std::regex_search(line, m, field)) into = m[1];
    };
    auto number = [&](const std::regex& field, auto& into) {
      if (std::regex_search(line, m, field)) into = std::stoll(m[1]);
    };
    text(name, e.name);
    text(category, e.category);
    text(handle, e.handle);
    text(label, e.label);
    number(pid, e.pid);
    number(tid, e.tid);
    number(bytes, e.bytes);
    number(ready, e.ready);
    if (std::regex_search(line, m, ts)) e.ts = std::stod(m[1]);
    events.push_back(std::move(e));
  }
  return events;
}

template <class Predicate>
std::vector<TraceEvent> select(const std::vector<TraceEvent>& events, Predicate&& keep) {
  std::vector<TraceEvent> kept;
  std::copy_if(events.begin(), events.end(), std::back_inserter(kept), keep);
  return kept;
}

class TraceTest : public testing::TestWithParam<int> {
 protected:
  // VERSA_TRACE would redirect every trace of these tests.
  ScopedEnvironment no_trace_override_{"VERSA_TRACE", nullptr};
};

TEST(TraceJsonRecogniserTest, TellsJsonFromNonJson) {
  EXPECT_TRUE(is_json(R"({"a":[1,-2.5e3,"x\"y",true,null,{}],"b":{"c":[]}})"));
  EXPECT_FALSE(is_json(R"({"a":1,})"));
  EXPECT_FALSE(is_json(R"({"a" 1})"));
  EXPECT_FALSE(is_json(R"({"a":"unterminated})"));
  EXPECT_FALSE(is_json(R"(["bad \q escape"])"));
  EXPECT_FALSE(is_json(R"([01])"));
  EXPECT_FALSE(is_json(R"([1] [2])"));
}

TEST_P(TraceTest, FileHasOneSlicePerTaskRunAndOneTrackPerWorker) {
  const TemporaryPath trace("trace.json");
  constexpr int alphas = 30;
  constexpr int betas = 20;
  {
    versa::Config config = workers(GetParam());
    config.trace_file = trace.path().string();
    versa::Runtime rt{config};
    auto alpha = versa::task_type("alpha").cpu([](versa::Span<int> v) { ++v[0]; });
    auto beta = versa::task_type("beta").cpu([](versa::Span<const int> v) { (void)v[0]; });
    int x = 0;
    auto h = rt.data(x, "x");
    for (int i = 0; i < alphas; ++i) {
      rt.submit(alpha, versa::write(h));
      if (i < betas) rt.submit(beta, versa::read(h));
    }
    rt.submit(
        "one-off", [] {}, versa::name("custom"));
    rt.submit(
        "one-off", [] {}, versa::name("quote \" backslash \\ newline \n end"));
    rt.wait_all();
    EXPECT_EQ(x, alphas);
    EXPECT_FALSE(fs::exists(trace.path())) << "the trace is written when the runtime is destroyed";
  }
  ASSERT_TRUE(fs::exists(trace.path()));
  const std::string text = read_file(trace.path());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.front(), '{');
  EXPECT_TRUE(is_json(text)) << text.substr(0, 2000);
  EXPECT_THAT(text, HasSubstr(R"("traceEvents")"));
  EXPECT_EQ(occurrences(text, R"("ph":"X")"), static_cast<std::size_t>(alphas + betas + 2));
  EXPECT_EQ(occurrences(text, R"("name":"alpha")"), static_cast<std::size_t>(alphas));
  EXPECT_EQ(occurrences(text, R"("name":"beta")"), static_cast<std::size_t>(betas));
  EXPECT_EQ(occurrences(text, R"("name":"custom")"), 1u);
  EXPECT_EQ(occurrences(text, R"("name":"quote \" backslash \\ newline \n end")"), 1u);
  EXPECT_EQ(occurrences(text, "one-off"), 0u) << "versa::name() replaces the task's name";
  EXPECT_EQ(occurrences(text, R"("name":"thread_name")"), static_cast<std::size_t>(GetParam()));
  for (const long tid : slice_threads(text)) {
    EXPECT_GE(tid, 0);
    EXPECT_LT(tid, GetParam());
  }
}

TEST_P(TraceTest, FailedTasksHaveASliceAndCancelledTasksHaveNone) {
  const TemporaryPath trace("trace.json");
  {
    versa::Config config = workers(GetParam());
    config.trace_file = trace.path().string();
    versa::Runtime rt{config};
    int x = 0;
    auto h = rt.data(x, "x");
    rt.submit(
        "explode", [](versa::Span<int>) { throw std::runtime_error("boom"); }, versa::write(h));
    rt.submit(
        "cancelled", [](versa::Span<const int>) {}, versa::read(h));
    rt.submit(
        "cancelled", [](versa::Span<int>) {}, versa::write(h));
    EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  }
  const std::string text = read_file(trace.path());
  EXPECT_TRUE(is_json(text));
  EXPECT_EQ(occurrences(text, R"("ph":"X")"), 1u);
  EXPECT_EQ(occurrences(text, R"("name":"explode")"), 1u);
  EXPECT_EQ(occurrences(text, "cancelled"), 0u);
}

TEST_P(TraceTest, VersaTraceEnvironmentVariableSwitchesTracingOnAndOverridesTheConfig) {
  const TemporaryPath from_environment("environment.json");
  const TemporaryPath from_config("config.json");
  constexpr int tasks = 10;
  {
    const ScopedEnvironment trace_variable("VERSA_TRACE", from_environment.path().c_str());
    versa::Runtime plain{workers(GetParam())};
    for (int i = 0; i < tasks; ++i) plain.submit("env task", [] {});
    plain.wait_all();

    versa::Config config = workers(GetParam());
    config.trace_file = from_config.path().string();
    versa::Runtime configured{config};
    configured.submit("configured task", [] {});
    configured.wait_all();
  }
  // Both runtimes wrote to the file the variable names; the second, destroyed first, was
  // overwritten by the first.
  EXPECT_FALSE(fs::exists(from_config.path())) << "VERSA_TRACE did not override trace_file";
  ASSERT_TRUE(fs::exists(from_environment.path()));
  const std::string text = read_file(from_environment.path());
  EXPECT_TRUE(is_json(text));
  EXPECT_EQ(occurrences(text, R"("ph":"X")"), static_cast<std::size_t>(tasks));
  EXPECT_EQ(occurrences(text, R"("name":"env task")"), static_cast<std::size_t>(tasks));
  EXPECT_EQ(occurrences(text, R"("name":"thread_name")"), static_cast<std::size_t>(GetParam()));
}

TEST_P(TraceTest, NoFileIsWrittenWhenTracingIsOff) {
  const TemporaryPath directory("directory");
  fs::create_directories(directory.path());
  {
    const ScopedWorkingDirectory inside(directory.path());
    versa::Runtime rt{workers(GetParam())};
    int x = 0;
    auto h = rt.data(x, "x");
    for (int i = 0; i < 10; ++i)
      rt.submit(
          "task", [](versa::Span<int> v) { ++v[0]; }, versa::write(h));
    rt.wait_all();
    EXPECT_EQ(x, 10);
  }
  EXPECT_TRUE(fs::is_empty(directory.path())) << "a file appeared in the working directory";
}

// A trace that could not be written is refused when the runtime starts, not found at its end
// after the whole run; nothing is created.
TEST_P(TraceTest, AnUnwritableTraceFileIsRefusedAtTheStart) {
  const TemporaryPath missing("missing_directory");
  const fs::path file = missing.path() / "trace.json";
  versa::Config config = workers(GetParam());
  config.trace_file = file.string();
  try {
    versa::Runtime rt{config};
    FAIL() << "a runtime started with a trace file in a missing directory";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("Config::trace_file (VERSA_TRACE) = '" + file.string() +
                                    "' cannot be written: No such file or directory"));
  }
  const ScopedEnvironment variable("VERSA_TRACE", missing.path().c_str());
  fs::create_directories(missing.path());
  EXPECT_THAT([] { versa::Runtime rt{versa::Config{}}; },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("it is a directory")));
  EXPECT_TRUE(fs::is_empty(missing.path()));
}

// A folder that goes away while the runtime runs: the trace is reported as not written, and the
// destructor does not throw.
TEST_P(TraceTest, ATraceFolderRemovedWhileRunningIsReportedWithoutThrowingFromTheDestructor) {
  const TemporaryPath folder("folder");
  fs::create_directories(folder.path());
  const fs::path file = folder.path() / "trace.json";
  testing::internal::CaptureStderr();
  {
    versa::Config config = workers(GetParam());
    config.trace_file = file.string();
    versa::Runtime rt{config};
    rt.submit("task", [] {});
    rt.wait_all();
    fs::remove_all(folder.path());
  }
  const std::string errors = testing::internal::GetCapturedStderr();
  EXPECT_THAT(errors, HasSubstr("cannot write the trace file '" + file.string() + "'"));
  EXPECT_FALSE(fs::exists(file));
}

TEST_P(TraceTest, ReadyCounterIsSampledWhenEachTaskIsQueuedAndWhenItStarts) {
  const TemporaryPath trace("trace.json");
  constexpr int tasks = 40;
  {
    versa::Config config = workers(GetParam());
    config.trace_file = trace.path().string();
    versa::Runtime rt{config};
    int x = 0;
    auto h = rt.data(x, "x");
    for (int i = 0; i < tasks; ++i) {
      rt.submit(
          "inc", [](versa::Span<int> v) { ++v[0]; }, versa::write(h));
      rt.submit("free", [] {});
    }
    rt.wait_all();
    EXPECT_EQ(x, tasks);
  }
  const std::vector<TraceEvent> events = events_of(read_file(trace.path()));
  const auto samples = select(events, [](const TraceEvent& e) { return e.phase == "C"; });
  ASSERT_EQ(samples.size(), 2u * 2 * tasks) << "one sample when queued, one when started";
  std::int64_t highest = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].name, "ready tasks");
    EXPECT_EQ(samples[i].pid, 0);
    EXPECT_GE(samples[i].ready, 0);
    EXPECT_LE(samples[i].ready, 2 * tasks);
    if (i > 0) {
      EXPECT_GE(samples[i].ts, samples[i - 1].ts) << "samples are in time order";
    }
    highest = std::max(highest, samples[i].ready);
  }
  EXPECT_GE(highest, 1);
}

// A device with room for four of eight handles: copies both ways, evictions, kernels (on a track
// per stream: the second pass, of priority 1, on the high-priority streams), an add renamed on
// the device whose partial a flush brings home and applies on a CPU worker, and the device
// worker's reservations and launches.
TEST(TraceDevices, KernelsCopiesEvictionsAndFlushesHaveTracksOfTheirOwn) {
  const ScopedEnvironment no_trace_override{"VERSA_TRACE", nullptr};
  const TemporaryPath trace("trace.json");
  constexpr std::size_t n = 256;
  constexpr std::int64_t bytes = n * sizeof(double);
  constexpr std::size_t sum_n = 64;
  constexpr std::int64_t sum_bytes = sum_n * sizeof(double);
  constexpr int handles = 8;
  constexpr int passes = 2;
  versa::DeviceStatistics device;
  {
    versa::Config config = versa::testing::with_emulated(workers(2), 1, 4 * bytes);
    config.emulated_devices[0].streams = 2;
    config.emulated_devices[0].priority_streams = true;
    config.trace_file = trace.path().string();
    versa::Runtime rt{config};
    std::vector<std::vector<double>> data(handles, std::vector<double>(n, 1.0));
    std::vector<versa::Handle<double>> h;
    for (int k = 0; k < handles; ++k) h.push_back(rt.data(data[k], "h" + std::to_string(k)));
    const auto on_device = versa::placement(versa::Placement::gpu_only);
    for (int pass = 0; pass < passes; ++pass)
      for (int k = 0; k < handles; ++k)
        rt.submit(
            "scale",
            [](versa::Span<double> x) {
              for (double& e : x) e *= 2;
            },
            on_device, versa::write(h[k]), versa::priority(pass));
    std::vector<double> total(sum_n, 0.0);
    auto s = rt.data(total, "s");
    s.set_reduction(versa::sum<double>());
    rt.submit(
        "add",
        [](versa::Span<double> x) {
          for (double& e : x) e += 1;
        },
        on_device, versa::add(s));
    rt.submit(
        "look", [](versa::Span<const double>) {}, versa::placement(versa::Placement::cpu_only),
        versa::read(s));
    rt.wait_all();
    for (const auto& d : data) EXPECT_EQ(d, std::vector<double>(n, 4.0));
    EXPECT_EQ(total, std::vector<double>(sum_n, 1.0));
    device = rt.statistics()[1];
  }
  const std::string text = read_file(trace.path());
  ASSERT_TRUE(is_json(text)) << text.substr(0, 2000);
  const std::vector<TraceEvent> events = events_of(text);
  auto on_track = [&](long pid, long tid) {
    return select(events, [=](const TraceEvent& e) {
      return e.pid == pid && e.tid == tid && e.phase != "M";
    });
  };
  auto label = [&](const char* what, long pid, long tid) {
    for (const TraceEvent& e : events)
      if (e.phase == "M" && e.name == what && e.pid == pid && e.tid == tid) return e.label;
    return std::string("(none)");
  };
  EXPECT_EQ(label("process_name", 0, 0), "host");
  EXPECT_EQ(label("process_name", 1, 0), "emulated:0");
  EXPECT_EQ(label("thread_name", 0, 1), "cpu worker 1");
  EXPECT_EQ(label("thread_name", 1, 0), "emulated:0 kernels, stream 0");
  EXPECT_EQ(label("thread_name", 1, 1), "emulated:0 kernels, stream 1");
  EXPECT_EQ(label("thread_name", 1, 2), "emulated:0 kernels, high-priority stream 0");
  EXPECT_EQ(label("thread_name", 1, 3), "emulated:0 kernels, high-priority stream 1");
  EXPECT_EQ(label("thread_name", 1, 4), "emulated:0 copies to device");
  EXPECT_EQ(label("thread_name", 1, 5), "emulated:0 copies to host");
  EXPECT_EQ(label("thread_name", 1, 6), "emulated:0 evictions");
  EXPECT_EQ(label("thread_name", 1, 7), "emulated:0 reduction flushes");
  EXPECT_EQ(label("thread_name", 1, 8), "emulated:0 worker thread");

  // The first pass and the add on the kernel streams, the second pass on the high-priority ones.
  std::size_t kernels = 0, high_priority = 0;
  for (long tid = 0; tid < 4; ++tid)
    for (const TraceEvent& e : on_track(1, tid)) {
      EXPECT_EQ(e.phase, "X");
      EXPECT_EQ(e.category, "task");
      EXPECT_TRUE(e.name == "scale" || e.name == "add") << e.name;
      ++kernels;
      if (tid >= 2) ++high_priority;
    }
  EXPECT_EQ(kernels, static_cast<std::size_t>(handles * passes + 1));
  EXPECT_EQ(high_priority, static_cast<std::size_t>(handles));
  auto is_data_handle = [](const std::string& name) {
    return std::regex_match(name, std::regex("h[0-7]"));
  };
  // Every copy of a handle carries its size; the statistics count the same bytes.
  const auto to_device = on_track(1, 4);
  EXPECT_GE(to_device.size(), static_cast<std::size_t>(handles));
  std::int64_t bytes_to_device = 0;
  for (const TraceEvent& e : to_device) {
    EXPECT_EQ(e.phase, "X");
    EXPECT_EQ(e.category, "copy");
    EXPECT_EQ(e.bytes, bytes);
    EXPECT_TRUE(is_data_handle(e.handle)) << e.handle;
    bytes_to_device += e.bytes;
  }
  EXPECT_EQ(bytes_to_device, static_cast<std::int64_t>(device.bytes_to_device));
  const auto to_host = on_track(1, 5);
  std::int64_t bytes_to_host = 0;
  int partials = 0;
  for (const TraceEvent& e : to_host) {
    EXPECT_EQ(e.phase, "X");
    if (e.name == "partial to host") {
      ++partials;
      EXPECT_EQ(e.bytes, sum_bytes);
    } else {
      EXPECT_EQ(e.name, "to host");
      EXPECT_EQ(e.bytes, bytes);
      EXPECT_TRUE(is_data_handle(e.handle)) << e.handle;
    }
    bytes_to_host += e.bytes;
  }
  EXPECT_EQ(partials, 1) << "the add's partial comes home once, for the flush";
  EXPECT_GT(bytes_to_host, sum_bytes) << "evicted and final data goes home";
  // A write-back started by an eviction may land after the statistics were read.
  EXPECT_GE(bytes_to_host, static_cast<std::int64_t>(device.bytes_to_host));

  const auto evictions = on_track(1, 6);
  EXPECT_GE(evictions.size(), 1u);
  EXPECT_EQ(evictions.size(), device.evictions);
  for (const TraceEvent& e : evictions) {
    EXPECT_EQ(e.phase, "i");
    EXPECT_EQ(e.category, "eviction");
    EXPECT_EQ(e.bytes, bytes);
    EXPECT_TRUE(is_data_handle(e.handle)) << e.handle;
  }

  // The worker thread's track: each kernel's launch, named after its task, and each task's
  // reservation of its memory before it (a task may be reserved again after waiting for room).
  std::size_t launches = 0, reservations = 0;
  for (const TraceEvent& e : on_track(1, 8)) {
    EXPECT_EQ(e.phase, "X");
    EXPECT_EQ(e.category, "worker");
    EXPECT_TRUE(e.handle == "scale" || e.handle == "add") << e.handle;
    if (e.name == "launch") ++launches;
    if (e.name == "reserve") ++reservations;
  }
  EXPECT_EQ(launches, kernels);
  EXPECT_GE(reservations, kernels);

  const auto flushes = select(events, [](const TraceEvent& e) { return e.category == "flush"; });
  ASSERT_EQ(flushes.size(), 1u);
  EXPECT_EQ(flushes[0].pid, 0) << "applied on a CPU worker";
  EXPECT_EQ(flushes[0].phase, "X");
  EXPECT_EQ(flushes[0].name, "reduction flush");
  EXPECT_EQ(flushes[0].handle, "s");

  // The CPU ran the flush and "look": each was queued once and started once.
  const auto samples = select(events, [](const TraceEvent& e) { return e.phase == "C"; });
  EXPECT_EQ(samples.size(), 4u);
  for (const TraceEvent& e : samples) EXPECT_GE(e.ready, 0);
}

INSTANTIATE_TEST_SUITE_P(Workers, TraceTest, testing::Values(1, 2, 4, 8));

}  // namespace
