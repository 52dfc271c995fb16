// The stall report (Config::stall_report_seconds) and Runtime::describe_pending: the common
// stalls are provoked (a forgotten host view, a task that blocks holding a handle, a chain of
// waits, a task holding a handle on a device, a commute holding the exclusive flag), and the
// report must name the waiting task, the handle, the version needed and the holder. Every line
// the runtime writes itself starts with its label (Config::label).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "support/eventually.hpp"
#include "support/scoped_environment.hpp"
#include "support/temporary_path.hpp"
#include "versa/versa.hpp"

namespace {

using namespace std::chrono_literals;
using testing::HasSubstr;
using testing::Not;
using versa::Span;
using versa::testing::eventually;
using versa::testing::workers;
using versa::testing_support::ScopedEnvironment;
using versa::testing_support::TemporaryPath;

// A gate a task body waits at until the test opens it (or 20 s pass, so that a failing test
// still ends).
class Gate {
 public:
  void wait() const {
    eventually([this] { return open_.load(); }, 20000ms);
  }
  void open() { open_ = true; }

 private:
  std::atomic<bool> open_{false};
};

// Messages the runtime sends to Config::diagnostics.
class Messages {
 public:
  void hook(versa::Config& config) {
    config.diagnostics = [this](const std::string& message) {
      std::lock_guard<std::mutex> guard(mutex_);
      messages_.push_back(message);
    };
  }
  std::vector<std::string> get() {
    std::lock_guard<std::mutex> guard(mutex_);
    return messages_;
  }
  std::size_t count() { return get().size(); }

 private:
  std::mutex mutex_;
  std::vector<std::string> messages_;
};

TEST(StallReport, TheWatchdogNamesAForgottenHostView) {
  Messages messages;
  versa::Config config = workers(2);
  config.stall_report_seconds = 0.2;
  config.label = "solver";  // which starts the report
  messages.hook(config);
  versa::Runtime rt{config};
  int x = 0;
  auto h = rt.data(x, "h");
  auto view = rt.acquire(versa::write(h));
  rt.submit(
      "reader", [](Span<const int>) {}, versa::read(h));
  ASSERT_TRUE(eventually([&] { return messages.count() > 0; }));
  const std::string report = messages.get().front();
  EXPECT_THAT(report, testing::StartsWith("solver: stall: no task has finished for"));
  EXPECT_THAT(report, HasSubstr("handle 'h': version 0, 2 accesses registered, 1 host view open"));
  EXPECT_THAT(report, HasSubstr("waiting: task 'reader' (read) needs version 1"));
  EXPECT_THAT(report,
              HasSubstr("held by: a host view from acquire(write), from version 0: not released"));
  // Once per stall: nothing more while nothing moves.
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(messages.count(), 1u);
  view.release();
  rt.wait_all();
  EXPECT_EQ(messages.count(), 1u);
}

TEST(StallReport, NothingIsReportedWhileTasksFinishOrNothingIsPending) {
  Messages messages;
  versa::Config config = workers(2);
  config.stall_report_seconds = 0.2;
  messages.hook(config);
  versa::Runtime rt{config};
  int x = 0;
  auto h = rt.data(x, "h");
  // A chain of tasks, each shorter than the stall time, taking three times as long in all.
  for (int i = 0; i < 12; ++i)
    rt.submit(
        "step", [](Span<int> v) { std::this_thread::sleep_for(50ms), ++v[0]; }, versa::write(h));
  rt.wait_all();
  EXPECT_EQ(x, 12);
  // A host view held while nothing is pending is no stall.
  {
    auto view = rt.acquire(versa::write(h));
    std::this_thread::sleep_for(500ms);
  }
  rt.wait_all();
  EXPECT_EQ(messages.count(), 0u) << messages.get().front();
}

class StallReportTest : public testing::TestWithParam<int> {};

TEST_P(StallReportTest, ATaskThatBlocksHoldingAHandleIsNamedRunning) {
  versa::Runtime rt{workers(GetParam())};
  int x = 0;
  auto h = rt.data(x, "h");
  Gate gate;
  rt.submit(
      "blocker", [&](Span<int>) { gate.wait(); }, versa::write(h));
  rt.submit(
      "waiter", [](Span<const int>) {}, versa::read(h));
  std::string report;
  EXPECT_TRUE(eventually([&] {
    report = rt.describe_pending();
    return report.find("running on cpu worker") != std::string::npos;
  })) << report;
  EXPECT_THAT(report, HasSubstr("versa: pending work"));
  EXPECT_THAT(report, HasSubstr("handle 'h': version 0, 2 accesses registered"));
  EXPECT_THAT(report, HasSubstr("waiting: task 'waiter' (read) needs version 1"));
  EXPECT_THAT(report, HasSubstr("held by: task 'blocker' (write), from version 0: running on cpu "
                                "worker "));
  gate.open();
  rt.wait_all();
}

TEST_P(StallReportTest, AChainOfWaitsIsFollowedToTheHostView) {
  versa::Runtime rt{workers(GetParam())};
  int a = 0, b = 0;
  auto ha = rt.data(a, "a");
  auto hb = rt.data(b, "b");
  auto view = rt.acquire(versa::write(ha));
  rt.submit(
      "middle", [](Span<const int>, Span<int>) {}, versa::read(ha), versa::write(hb));
  rt.submit(
      "last", [](Span<const int>) {}, versa::read(hb));
  const std::string report = rt.describe_pending();
  EXPECT_THAT(report, HasSubstr("handle 'a': version 0, 2 accesses registered, 1 host view open\n"
                                "  waiting: task 'middle' (read) needs version 1\n"
                                "  held by: a host view from acquire(write), from version 0: not "
                                "released\n"));
  EXPECT_THAT(report, HasSubstr("handle 'b': version 0, 2 accesses registered\n"
                                "  waiting: task 'last' (read) needs version 1\n"
                                "  held by: task 'middle' (write), from version 0: parked at "
                                "handle 'a', needs version 1\n"));
  EXPECT_THAT(report, HasSubstr("chain: task 'last' (read) -> handle 'b' -> task 'middle' (write) "
                                "-> handle 'a' -> a host view from acquire(write): not released"));
  view.release();
  rt.wait_all();
  EXPECT_THAT(rt.describe_pending(), HasSubstr("no task is parked at a handle"));
}

TEST_P(StallReportTest, ACommuteHoldingTheExclusiveFlagIsNamed) {
  versa::Runtime rt{workers(GetParam())};
  int x = 0;
  auto h = rt.data(x, "sum");
  Gate gate;
  rt.submit(
      "first", [&](Span<int> v) { gate.wait(), ++v[0]; }, versa::commute(h));
  rt.submit(
      "second", [](Span<int> v) { ++v[0]; }, versa::commute(h));
  std::string report;
  EXPECT_TRUE(eventually([&] {
    report = rt.describe_pending();
    return report.find("waits for the exclusive flag") != std::string::npos &&
           report.find("running on cpu worker") != std::string::npos;
  })) << report;
  EXPECT_THAT(report, HasSubstr("exclusive flag taken"));
  EXPECT_THAT(report, HasSubstr("waiting: task "));
  EXPECT_THAT(report, HasSubstr("(commute) waits for the exclusive flag"));
  EXPECT_THAT(report, HasSubstr("(commute), from version 0: running on cpu worker"));
  gate.open();
  rt.wait_all();
  EXPECT_EQ(x, 2);
}

INSTANTIATE_TEST_SUITE_P(Workers, StallReportTest, testing::Values(1, 2),
                         [](const testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "_workers";
                         });

TEST(StallReport, ATaskHoldingAHandleOnADeviceIsNamedWithItsDevice) {
  versa::Runtime rt{versa::testing::with_emulated(workers(2), 1)};
  std::vector<double> data(16, 1.0);
  auto h = rt.data(data, "tile");
  Gate gate;
  auto on_device = versa::task_type("device blocker")
                       .cpu([](Span<double>) {})
                       .emulated([&](Span<double> v) { gate.wait(), v[0] = 2; })
                       .placement(versa::Placement::gpu_only);
  rt.submit(on_device, versa::write(h));
  rt.submit(
      "reader", [](Span<const double>) {}, versa::read(h));
  std::string report;
  EXPECT_TRUE(eventually([&] {
    report = rt.describe_pending();
    return report.find("on device 'emulated:0'") != std::string::npos;
  })) << report;
  EXPECT_THAT(report, HasSubstr("waiting: task 'reader' (read) needs version 1"));
  EXPECT_THAT(report,
              HasSubstr("held by: task 'device blocker' (write), from version 0: on device "
                        "'emulated:0': running, queued on its streams, or waiting for one"));
  gate.open();
  rt.wait_all();
  EXPECT_EQ(data[0], 2.0);
}

TEST(StallReport, WithoutTrackingHostViewsAreStillNamed) {
  versa::Config config = workers(2);
  config.track_tasks = false;
  config.stall_report_seconds = 0;
  versa::Runtime rt{config};
  int a = 0, b = 0;
  auto ha = rt.data(a, "a");
  auto hb = rt.data(b);  // unnamed: its number names it
  Gate gate;
  auto view = rt.acquire(versa::write(ha));
  rt.submit(
      "reader", [](Span<const int>) {}, versa::read(ha));
  rt.submit(
      "blocker", [&](Span<int>) { gate.wait(); }, versa::write(hb));
  rt.submit(
      "waiter", [](Span<const int>) {}, versa::read(hb));
  const std::string report = rt.describe_pending();
  EXPECT_THAT(report, HasSubstr("waiting: task 'reader' (read) needs version 1"));
  EXPECT_THAT(report,
              HasSubstr("held by: a host view from acquire(write), from version 0: not released"));
  EXPECT_THAT(report, HasSubstr("handle #2: version 0, 2 accesses registered"));
  EXPECT_THAT(report, HasSubstr("waiting: task 'waiter' (read) needs version 1"));
  EXPECT_THAT(report, HasSubstr("held by: unknown (tasks are tracked with Config::track_tasks"));
  EXPECT_THAT(report, Not(HasSubstr("chain:")));
  view.release();
  gate.open();
  rt.wait_all();
}

TEST(StallReport, TheEnvironmentSetsTheStallTimeAndABadValueIsNamed) {
  {
    ScopedEnvironment env("VERSA_STALL_REPORT", "0.2");
    ScopedEnvironment track("VERSA_TRACK_TASKS", "1");
    const versa::Config config = versa::Config::from_environment(versa::Config{});
    EXPECT_DOUBLE_EQ(config.stall_report_seconds, 0.2);
    EXPECT_TRUE(config.track_tasks);
  }
  for (const char* bad : {"-1", "soon", "1e9", "nan"}) {
    ScopedEnvironment env("VERSA_STALL_REPORT", bad);
    try {
      versa::Config::from_environment(versa::Config{});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("VERSA_STALL_REPORT")) << bad;
    }
  }
  {
    ScopedEnvironment track("VERSA_TRACK_TASKS", "2");
    EXPECT_THROW(versa::Config::from_environment(versa::Config{}), std::invalid_argument);
  }
  versa::Config negative;
  negative.stall_report_seconds = -0.5;
  try {
    versa::Config::from_environment(negative);
    ADD_FAILURE() << "a negative stall time was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("stall_report_seconds"));
  }
}

// The summary, the statistics, the messages held for the end and describe_pending start with
// the runtime's label (the stall report too: TheWatchdogNamesAForgottenHostView); an empty one
// is refused.
TEST(StallReport, TheLabelStartsEveryLineTheRuntimeWrites) {
  const TemporaryPath folder("folder");
  std::filesystem::create_directories(folder.path());
  versa::Config config = workers(2);
  config.label = "solver";
  config.quiet = false;
  config.print_statistics = true;
  config.trace_file = (folder.path() / "trace.json").string();
  testing::internal::CaptureStderr();
  {
    versa::Runtime rt{config};
    EXPECT_THAT(rt.topology_summary(), testing::StartsWith("solver: 2 CPU workers"));
    EXPECT_THAT(rt.describe_pending(), testing::StartsWith("solver: pending work"));
    rt.submit("task", [] {});
    rt.wait_all();
    std::filesystem::remove_all(folder.path());  // the trace cannot be written: a held message
  }
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_THAT(printed, testing::StartsWith("solver: 2 CPU workers"));
  EXPECT_THAT(printed, HasSubstr("\nsolver: statistics"));
  EXPECT_THAT(printed, HasSubstr("\nsolver: cannot write the trace file"));
  EXPECT_THAT(printed, Not(HasSubstr("versa:")));

  config.label = "";
  EXPECT_THAT([&config] { versa::Runtime rt{config}; },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("Config::label is empty")));
}

}  // namespace
