// Task failures and misuse (DESIGN.md section 6): a failure is rethrown by wait_all with the
// failed task's name, the tasks that depend on its output are cancelled (not run on garbage),
// nothing hangs, and misuse is refused with a message that names what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/config.hpp"
#include "support/message_of.hpp"
#include "support/scoped_environment.hpp"
#include "versa/versa.hpp"

namespace {

using testing::AllOf;
using testing::HasSubstr;
using versa::testing_support::ScopedEnvironment;

using versa::testing::message_of;
using versa::testing::workers;

// The TaskFailure that wait_all throws, or nothing when it returns normally.
std::optional<versa::TaskFailure> failure_of_wait_all(versa::Runtime& rt) {
  try {
    rt.wait_all();
  } catch (const versa::TaskFailure& failure) {
    return failure;
  }
  return std::nullopt;
}

// The message of the exception held by `error`.
std::string message_in(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
}

class ErrorsTest : public testing::TestWithParam<int> {
 protected:
  versa::Runtime rt{workers(GetParam())};
};

// --- Task failures ------------------------------------------------------------------------

TEST_P(ErrorsTest, FailureIsRethrownWithTheTaskNameAndTheOriginalException) {
  int x = 0;
  auto h = rt.data(x, "x");
  rt.submit(
      "producer", [](versa::Span<int>) { throw std::runtime_error("boom"); }, versa::write(h));

  const std::optional<versa::TaskFailure> failure = failure_of_wait_all(rt);
  ASSERT_TRUE(failure.has_value()) << "wait_all did not throw TaskFailure";
  EXPECT_THAT(failure->what(), AllOf(HasSubstr("producer"), HasSubstr("boom")));
  EXPECT_EQ(failure->task_name(), "producer");
  EXPECT_EQ(failure->cancelled_tasks(), 0u);
  ASSERT_TRUE(failure->original());
  EXPECT_THROW(std::rethrow_exception(failure->original()), std::runtime_error);
  EXPECT_EQ(message_in(failure->original()), "boom");

  // The failure is reported once: the list is cleared.
  EXPECT_NO_THROW(rt.wait_all());
}

// Names are interned through a cache of the last one, compared a word at a time: one buffer
// rewritten in place, to every length and with one character changed at every position, must
// give each task its own name.
TEST_P(ErrorsTest, FailureNamesTheTaskWhateverTheLengthAndContentOfItsName) {
  std::string name;
  for (std::size_t length = 1; length <= 20; ++length) {
    for (std::size_t changed = 0; changed <= length; ++changed) {
      name.assign(length, 'n');
      if (changed < length) name[changed] = 'x';  // changed == length: the unchanged name
      rt.submit(name, [] { throw std::runtime_error("named"); });
      const std::optional<versa::TaskFailure> failure = failure_of_wait_all(rt);
      ASSERT_TRUE(failure.has_value()) << "no failure for a task named " << name;
      EXPECT_EQ(failure->task_name(), name);
    }
  }
}

TEST_P(ErrorsTest, DependentsOfAFailedTaskAreCancelledAndIndependentTasksRun) {
  int x = 0, y = 0, z = 0;
  auto hx = rt.data(x, "x"), hy = rt.data(y, "y"), hz = rt.data(z, "z");
  auto explode =
      versa::task_type("explode").cpu([](versa::Span<int>) { throw std::runtime_error("boom"); });
  std::atomic<int> earlier_reader_runs{0};
  std::atomic<int> dependent_runs{0};
  std::atomic<int> independent_runs{0};

  // Submitted before the failing task: not its dependent.
  rt.submit(
      "read x first", [&](versa::Span<const int>) { ++earlier_reader_runs; }, versa::read(hx));
  rt.submit(explode, versa::write(hx));
  // Dependents of x, directly or through y (which a cancelled task should have written).
  constexpr int dependents = 7;
  rt.submit(
      "read x", [&](versa::Span<const int>) { ++dependent_runs; }, versa::read(hx));
  rt.submit(
      "read x", [&](versa::Span<const int>) { ++dependent_runs; }, versa::read(hx));
  rt.submit(
      "x to y", [&](versa::Span<const int>, versa::Span<int>) { ++dependent_runs; },
      versa::read(hx), versa::write(hy));
  rt.submit(
      "update x", [&](versa::Span<int>) { ++dependent_runs; }, versa::write(hx));
  rt.submit(
      "read y", [&](versa::Span<const int>) { ++dependent_runs; }, versa::read(hy));
  rt.submit(
      "commute y", [&](versa::Span<int>) { ++dependent_runs; }, versa::commute(hy));
  rt.submit(
      "read x again", [&](versa::Span<const int>) { ++dependent_runs; }, versa::read(hx));
  // Independent of the failure.
  constexpr int independents = 20;
  for (int i = 0; i < independents; ++i) {
    rt.submit(
        "independent",
        [&](versa::Span<int> v) {
          ++v[0];
          ++independent_runs;
        },
        versa::write(hz));
  }

  const std::optional<versa::TaskFailure> failure = failure_of_wait_all(rt);
  ASSERT_TRUE(failure.has_value()) << "wait_all did not throw TaskFailure";
  EXPECT_EQ(failure->task_name(), "explode");
  EXPECT_THAT(failure->what(), AllOf(HasSubstr("explode"), HasSubstr("boom")));
  EXPECT_EQ(failure->cancelled_tasks(), static_cast<std::size_t>(dependents));
  EXPECT_EQ(dependent_runs.load(), 0);
  EXPECT_EQ(earlier_reader_runs.load(), 1);
  EXPECT_EQ(independent_runs.load(), independents);
  EXPECT_EQ(z, independents);

  // The runtime is still usable.
  rt.submit(
      "after", [](versa::Span<int> v) { v[0] += 100; }, versa::write(hz));
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(z, independents + 100);
}

TEST_P(ErrorsTest, TaskThatOnlyReadAHandleAndThrewDoesNotPoisonIt) {
  int x = 1;
  auto h = rt.data(x, "x");
  std::atomic<int> later_runs{0};
  int seen = 0;
  rt.submit(
      "bad reader", [](versa::Span<const int>) { throw std::runtime_error("reader failed"); },
      versa::read(h));
  rt.submit(
      "writer",
      [&](versa::Span<int> v) {
        v[0] += 10;
        ++later_runs;
      },
      versa::write(h));
  rt.submit(
      "reader",
      [&](versa::Span<const int> v) {
        seen = v[0];
        ++later_runs;
      },
      versa::read(h));

  const std::optional<versa::TaskFailure> failure = failure_of_wait_all(rt);
  ASSERT_TRUE(failure.has_value()) << "wait_all did not throw TaskFailure";
  EXPECT_EQ(failure->task_name(), "bad reader");
  EXPECT_EQ(failure->cancelled_tasks(), 0u);
  EXPECT_EQ(later_runs.load(), 2);
  EXPECT_EQ(seen, 11);
  auto view = rt.acquire(versa::read(h));
  EXPECT_EQ(view[0], 11);
}

TEST_P(ErrorsTest, HostAcquireOfDataThatAFailedTaskShouldHaveProducedThrows) {
  int x = 0;
  auto h = rt.data(x, "x");
  rt.submit(
      "producer", [](versa::Span<int>) { throw std::runtime_error("boom"); }, versa::write(h));
  try {
    auto view = rt.acquire(versa::read(h));
    ADD_FAILURE() << "acquire(read) of poisoned data returned " << view[0];
  } catch (const versa::TaskFailure& failure) {
    EXPECT_EQ(failure.task_name(), "producer");
    EXPECT_THAT(failure.what(), HasSubstr("boom"));
  }
  EXPECT_THROW((void)rt.acquire(versa::write(h)), versa::TaskFailure);
  EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  // Reporting the failure does not make the data valid.
  EXPECT_THROW((void)rt.acquire(versa::read(h)), versa::TaskFailure);
  // The refused acquires released their accesses: later tasks are not blocked by them.
  rt.submit(
      "overwrite", [](versa::Span<int> v) { v[0] = 3; }, versa::write_only(h));
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(x, 3);
}

TEST_P(ErrorsTest, WriteOnlyTaskAfterAFailureMakesTheHandleValidAgain) {
  int x = 0;
  auto h = rt.data(x, "x");
  rt.submit(
      "producer", [](versa::Span<int>) { throw std::runtime_error("boom"); }, versa::write(h));
  EXPECT_THROW(rt.wait_all(), versa::TaskFailure);

  std::atomic<int> reader_runs{0};
  int seen = -1;
  rt.submit(
      "overwrite", [](versa::Span<int> v) { v[0] = 42; }, versa::write_only(h));
  rt.submit(
      "reader",
      [&](versa::Span<const int> v) {
        seen = v[0];
        ++reader_runs;
      },
      versa::read(h));
  rt.submit(
      "updater", [](versa::Span<int> v) { ++v[0]; }, versa::write(h));
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(reader_runs.load(), 1);
  EXPECT_EQ(seen, 42);
  auto view = rt.acquire(versa::read(h));
  EXPECT_EQ(view[0], 43);
}

TEST_P(ErrorsTest, HostWriteOnlyAcquireAfterAFailureMakesTheHandleValidAgain) {
  int x = 0;
  auto h = rt.data(x, "x");
  rt.submit(
      "producer", [](versa::Span<int>) { throw std::runtime_error("boom"); }, versa::write(h));
  {
    auto view = rt.acquire(versa::write_only(h));
    view[0] = 7;
  }
  int seen = -1;
  rt.submit(
      "reader", [&](versa::Span<const int> v) { seen = v[0]; }, versa::read(h));
  const std::optional<versa::TaskFailure> failure = failure_of_wait_all(rt);
  ASSERT_TRUE(failure.has_value()) << "the producer's failure was not reported";
  EXPECT_EQ(failure->task_name(), "producer");
  EXPECT_EQ(failure->cancelled_tasks(), 0u);
  EXPECT_EQ(seen, 7);
}

// A task that needs data a failed task should have produced is cancelled whenever it is
// submitted. If it is submitted after wait_all has reported that failure, nothing may report
// success for it either: acquire() in the same situation throws TaskFailure, and a wait_all that
// returns normally tells the program that the task ran.
TEST_P(ErrorsTest, TaskCancelledAfterTheFailureWasReportedIsNotPassedOffAsSuccess) {
  int x = 0;
  auto h = rt.data(x, "x");
  rt.submit(
      "producer", [](versa::Span<int>) { throw std::runtime_error("boom"); }, versa::write(h));
  EXPECT_THROW(rt.wait_all(), versa::TaskFailure);

  std::atomic<bool> ran{false};
  rt.submit(
      "late reader", [&](versa::Span<const int>) { ran = true; }, versa::read(h));
  const std::optional<versa::TaskFailure> failure = failure_of_wait_all(rt);
  EXPECT_FALSE(ran.load()) << "a task ran on data that a failed task should have produced";
  EXPECT_TRUE(failure.has_value())
      << "'late reader' was cancelled (its input was never produced), yet wait_all returned "
         "normally";
  if (failure) {
    EXPECT_EQ(failure->task_name(), "producer");
    EXPECT_EQ(failure->cancelled_tasks(), 1u);
  }
}

// --- Misuse at the call that caused it --------------------------------------------------------

TEST_P(ErrorsTest, EmptyHandleIsRefused) {
  versa::Handle<int> never_registered;
  EXPECT_THAT(message_of<std::invalid_argument>([&] {
                rt.submit(
                    "use empty", [](versa::Span<int>) {}, versa::write(never_registered));
              }),
              AllOf(HasSubstr("use empty"), HasSubstr("empty handle")));

  int x = 0;
  auto h = rt.data(x, "x");
  auto moved_to = std::move(h);
  EXPECT_THAT(message_of<std::invalid_argument>([&] {
                rt.submit(
                    "use moved", [](versa::Span<const int>) {}, versa::read(h));
              }),
              HasSubstr("empty handle"));
  EXPECT_THAT(message_of<std::invalid_argument>([&] { (void)rt.acquire(versa::read(h)); }),
              HasSubstr("empty handle"));

  // Nothing was registered by the refused submissions.
  rt.submit(
      "valid", [](versa::Span<int> v) { v[0] = 5; }, versa::write(moved_to));
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(x, 5);
}

TEST_P(ErrorsTest, SameHandleTwiceInOneTaskIsRefused) {
  int x = 0;
  auto h = rt.data(x, "dup");
  EXPECT_THAT(message_of<std::invalid_argument>([&] {
                rt.submit(
                    "twice", [](versa::Span<const int>, versa::Span<int>) {}, versa::read(h),
                    versa::write(h));
              }),
              AllOf(HasSubstr("'dup'"), HasSubstr("twice")));

  // Tasks with many accesses take another path to find the duplicate.
  std::vector<versa::Token> tokens;
  for (int i = 0; i < 17; ++i)
    tokens.push_back(rt.token(std::string("t").append(std::to_string(i))));
  auto submit_many = [&]<std::size_t... I>(std::index_sequence<I...>) {
    // 18 accesses to 17 tokens: the last one repeats t0.
    rt.submit(
        "many", [] {}, versa::read(tokens[I % tokens.size()])...);
  };
  EXPECT_THAT(
      message_of<std::invalid_argument>([&] { submit_many(std::make_index_sequence<18>()); }),
      AllOf(HasSubstr("'t0'"), HasSubstr("twice")));

  // The refused submissions left nothing behind on the handles.
  rt.submit(
      "valid", [](versa::Span<int> v) { v[0] = 9; }, versa::write(h));
  rt.submit(
      "valid tokens", [] {}, versa::write(tokens[0]), versa::write(tokens[16]));
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(x, 9);
}

TEST_P(ErrorsTest, TaskTypeWithoutImplementationIsRefused) {
  int x = 0;
  auto h = rt.data(x, "x");
  auto nothing = versa::task_type("nothing");
  EXPECT_THAT(message_of<std::invalid_argument>([&] { rt.submit(nothing, versa::write(h)); }),
              AllOf(HasSubstr("'nothing'"), HasSubstr("no implementation")));
  rt.submit(
      "valid", [](versa::Span<int> v) { v[0] = 1; }, versa::write(h));
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(x, 1);
}

TEST_P(ErrorsTest, SpawnedChildAccessingAHandleItsParentHoldsIsRefused) {
  int x = 0;
  auto h = rt.data(x, "shared");
  std::string message = "<spawn did not throw>";
  rt.submit(
      "parent",
      [&](versa::Span<int> v) {
        v[0] = 1;
        try {
          rt.spawn(
              "child", [](versa::Span<const int>) {}, versa::read(h));
        } catch (const std::invalid_argument& e) {
          message = e.what();
        }
      },
      versa::write(h));
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_THAT(message, AllOf(HasSubstr("'shared'"), HasSubstr("'parent'"), HasSubstr("'child'")));
  EXPECT_EQ(x, 1);
}

TEST_P(ErrorsTest, TileWithLeadingDimensionSmallerThanItsRowsIsRefused) {
  std::vector<double> block(16, 0.0);
  EXPECT_THAT(message_of<std::invalid_argument>([&] { rt.tile(block.data(), 4, 4, 3, "narrow"); }),
              AllOf(HasSubstr("'narrow'"), HasSubstr("leading dimension")));
  auto tile = rt.tile(block.data(), 4, 4, 4, "square");
  EXPECT_TRUE(static_cast<bool>(tile));
}

// No memory holds data whose size in bytes overflows: such a size is a bug (a negative count
// made unsigned), refused with the handle's name before anything uses it.
TEST_P(ErrorsTest, ASizeWhoseBytesOverflowIsRefused) {
  std::vector<double> block(16, 0.0);
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 4;
  EXPECT_THAT(message_of<std::length_error>([&] { rt.data(block.data(), huge, "negative"); }),
              AllOf(HasSubstr("'negative'"), HasSubstr("overflows")));
  EXPECT_THAT(
      message_of<std::length_error>([&] { rt.tile(block.data(), 4, huge / 2, huge / 2, "wide"); }),
      HasSubstr("'wide'"));
  EXPECT_NO_THROW(rt.data(block.data(), block.size(), "block"));
}

TEST_P(ErrorsTest, HandleDestroyedWhileATaskUsesItIsDiagnosedAfterWaiting) {
  int x = 0;
  std::atomic<bool> writer_finished{false};
  {
    auto h = rt.data(x, "doomed");
    rt.submit(
        "slow writer",
        [&](versa::Span<int> v) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          v[0] = 1;
          writer_finished = true;
        },
        versa::write(h));
    rt.submit(
        "reader", [](versa::Span<const int>) {}, versa::read(h));
  }  // ~Handle: reports the misuse and waits for both tasks.
  EXPECT_TRUE(writer_finished.load()) << "the handle's destructor did not wait for its tasks";
  EXPECT_EQ(x, 1);
  EXPECT_THAT(message_of<std::logic_error>([&] { rt.wait_all(); }),
              AllOf(HasSubstr("'doomed'"), HasSubstr("destroyed")));
  EXPECT_NO_THROW(rt.wait_all());
}

TEST_P(ErrorsTest, HandleDestroyedWhileItsHostViewIsAliveIsDiagnosedWithoutHanging) {
  int x = 0;
  auto h = std::make_unique<versa::Handle<int>>(rt.data(x, "viewed"));
  auto view = rt.acquire(versa::write(*h));
  std::atomic<bool> reader_ran{false};
  rt.submit(
      "reader", [&](versa::Span<const int>) { reader_ran = true; }, versa::read(*h));
  h.reset();  // Returns at once instead of waiting for the view forever.
  EXPECT_FALSE(reader_ran.load());
  view.view()[0] = 3;
  view.release();
  EXPECT_THAT(message_of<std::logic_error>([&] { rt.wait_all(); }),
              AllOf(HasSubstr("'viewed'"), HasSubstr("acquire()")));
  EXPECT_TRUE(reader_ran.load());
  EXPECT_EQ(x, 3);
}

// The handle destroyed under a view is kept while the view lives, through a wait_all, and
// destroyed at the next wait_all after the view's release (a use after free there, or a leak,
// shows in the AddressSanitizer build).
TEST_P(ErrorsTest, HandleDestroyedUnderAViewIsKeptUntilTheViewIsReleased) {
  int x = 0;
  auto h = std::make_unique<versa::Handle<int>>(rt.data(x, "viewed"));
  rt.submit(
      "writer", [](versa::Span<int> v) { v[0] = 1; }, versa::write(*h));
  auto view = rt.acquire(versa::write(*h));
  h.reset();
  EXPECT_THAT(message_of<std::logic_error>([&] { rt.wait_all(); }), HasSubstr("'viewed'"));
  view.view()[0] += 2;
  view.release();
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(x, 3);
}

TEST_P(ErrorsTest, AcquireInsideATaskIsRefused) {
  int x = 0;
  auto h = rt.data(x, "x");
  std::string message = "<acquire did not throw>";
  rt.submit("acquirer", [&] {
    try {
      (void)rt.acquire(versa::read(h));
    } catch (const std::logic_error& e) {
      message = e.what();
    }
  });
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_THAT(message, AllOf(HasSubstr("acquire"), HasSubstr("inside a task")));
}

TEST_P(ErrorsTest, WaitAllInsideATaskIsRefused) {
  std::string message = "<wait_all did not throw>";
  rt.submit("waiter", [&] {
    try {
      rt.wait_all();
    } catch (const std::logic_error& e) {
      message = e.what();
    }
  });
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_THAT(message, AllOf(HasSubstr("wait_all"), HasSubstr("inside a task")));
}

INSTANTIATE_TEST_SUITE_P(Workers, ErrorsTest, testing::Values(1, 2, 4, 8));

// --- Configuration ----------------------------------------------------------------------------

TEST(ConfigErrorsTest, CpuWorkersOutOfRangeAreRefused) {
  const ScopedEnvironment no_override("VERSA_NCPU", nullptr);
  for (const int count : {-1, 5000}) {
    versa::Config config = workers(count);
    EXPECT_THAT(message_of<std::invalid_argument>([&] { versa::Runtime rt{config}; }),
                AllOf(HasSubstr("cpu_workers"), HasSubstr(std::to_string(count))));
  }
}

TEST(ConfigErrorsTest, MalformedEnvironmentOverridesAreRefused) {
  for (const char* value : {"abc", "0", "-2", "4097", "3x", ""}) {
    const ScopedEnvironment ncpu("VERSA_NCPU", value);
    EXPECT_THAT(
        message_of<std::invalid_argument>([] { versa::Runtime rt{workers(2)}; }),
        AllOf(HasSubstr("VERSA_NCPU"), HasSubstr(std::string("'").append(value).append("'"))))
        << "VERSA_NCPU=" << value;
  }
  {
    const ScopedEnvironment pin("VERSA_PIN", "2");
    EXPECT_THAT(message_of<std::invalid_argument>([] { versa::Runtime rt{workers(2)}; }),
                HasSubstr("VERSA_PIN"));
  }
  const ScopedEnvironment ncpu("VERSA_NCPU", "3");
  versa::Runtime rt{workers(1)};
  EXPECT_EQ(rt.cpu_workers(), 3);
}

// A grandchild is not a child of the task holding the handle, but it deadlocks all the same: it
// waits for the grandparent, which waits for its child, which waits for the grandchild. Run in
// a separate process with an alarm so that a deadlock fails the test instead of hanging it.
TEST(ErrorsDeathTest, DescendantAccessingAHandleAnAncestorHoldsIsRefusedInsteadOfDeadlocking) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(3);
        bool refused = false;
        {
          versa::Runtime rt{workers(2)};
          int x = 0;
          auto h = rt.data(x, "held");
          rt.submit(
              "grandparent",
              [&](versa::Span<int>) {
                rt.spawn("child", [&] {
                  try {
                    rt.spawn(
                        "grandchild", [](versa::Span<const int>) {}, versa::read(h));
                  } catch (const std::invalid_argument&) {
                    refused = true;
                  }
                });
              },
              versa::write(h));
          rt.wait_all();
        }
        std::exit(refused ? 0 : 1);
      },
      testing::ExitedWithCode(0), "")
      << "killed by SIGALRM (14) means the program deadlocked; exit code 1 means the spawn was "
         "accepted and ran";
}

}  // namespace

// --- Diagnostics ------------------------------------------------------------------------------

// What no call returns goes to Config::diagnostics: here a failure nobody asked wait_all about,
// reported when the runtime is destroyed.
TEST(DiagnosticsTest, UnreportedFailureGoesToTheHook) {
  std::vector<std::string> messages;
  {
    versa::Config config = workers(2);
    config.diagnostics = [&messages](const std::string& message) { messages.push_back(message); };
    versa::Runtime rt{config};
    rt.submit("lost", [] { throw std::runtime_error("nobody asked"); });
  }
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_THAT(messages[0], AllOf(HasSubstr("lost"), HasSubstr("nobody asked")));
}

// Failures after the first that one wait_all reports go to the hook as they are reported.
TEST(DiagnosticsTest, FurtherFailuresOfAWaitAllGoToTheHook) {
  std::vector<std::string> messages;
  versa::Config config = workers(1);
  config.diagnostics = [&messages](const std::string& message) { messages.push_back(message); };
  versa::Runtime rt{config};
  rt.submit("first", [] { throw std::runtime_error("one"); });
  rt.submit("second", [] { throw std::runtime_error("two"); });
  EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_THAT(messages[0], HasSubstr("also failed"));
}
