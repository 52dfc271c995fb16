// Config::defer_registration: tasks the main program submits wait in a queue until an idle worker
// registers them, yet the program's order holds: a host access, a handle's destruction and a
// change of reduction operator come after the tasks submitted before them, however many are
// still queued; several submitting threads each keep their own order; the setting comes from
// the environment too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "support/scoped_environment.hpp"
#include "versa/versa.hpp"

namespace {

using testing::AllOf;
using testing::HasSubstr;

// (workers, whether the waiting thread runs tasks)
class DeferredRegistration : public testing::TestWithParam<std::tuple<int, bool>> {
 protected:
  static versa::Config config() {
    versa::Config config =
        versa::testing::deferring(versa::testing::workers(std::get<0>(GetParam())));
    config.caller_runs_tasks = std::get<1>(GetParam());
    return config;
  }
  versa::Runtime rt{config()};
};

constexpr int chain = 3000;

void add_one(versa::Span<long> v) { v[0] += 1; }

// Each increment reads the value the one before it left: an acquire registered ahead of queued
// increments would see fewer than all of them.
TEST_P(DeferredRegistration, AnAcquireComesAfterTheTasksSubmittedBeforeIt) {
  long x = 0;
  auto h = rt.data(x, "x");
  for (int round = 1; round <= 3; ++round) {
    for (int i = 0; i < chain; ++i) rt.submit("increment", add_one, versa::write(h));
    auto view = rt.acquire(versa::read(h));
    EXPECT_EQ(view[0], round * chain);
  }
  rt.wait_all();
  EXPECT_EQ(x, 3 * chain);
}

TEST_P(DeferredRegistration, DestroyingAHandleWaitsForTheTasksSubmittedBefore) {
  long x = 0;
  {
    auto h = rt.data(x, "doomed");
    for (int i = 0; i < chain; ++i) rt.submit("increment", add_one, versa::write(h));
  }  // ~Handle: the queued increments count among its accesses, and it waits for them.
  EXPECT_EQ(x, chain);
  try {
    rt.wait_all();
  } catch (const std::logic_error& misuse) {  // unless they had all run by then
    EXPECT_THAT(misuse.what(), AllOf(HasSubstr("'doomed'"), HasSubstr("destroyed")));
  }
  EXPECT_NO_THROW(rt.wait_all());
}

// A change of operator comes after the adds submitted before it: the first add holds the run of
// adds open, so the change is refused whether those adds were still queued or not.
TEST_P(DeferredRegistration, AChangeOfOperatorComesAfterTheAddsSubmittedBefore) {
  long x = 1;
  auto h = rt.data(x, "x");
  h.set_reduction(versa::sum<long>());
  std::atomic<bool> release{false};
  rt.submit(
      "held add",
      [&](versa::Span<long> v) {
        while (!release.load()) std::this_thread::yield();
        v[0] += 2;
      },
      versa::add(h));
  for (int i = 0; i < 99; ++i)
    rt.submit(
        "add two", [](versa::Span<long> v) { v[0] += 2; }, versa::add(h));
  const auto product = versa::Reduction<long>("product")
                           .identity([](versa::Span<long> p) {
                             for (long& e : p) e = 1;
                           })
                           .merge([](versa::Span<long> a, versa::Span<const long> b) {
                             for (std::size_t i = 0; i < a.size(); ++i) a[i] *= b[i];
                           });
  std::string refusal;
  try {
    h.set_reduction(product);
  } catch (const std::logic_error& e) {
    refusal = e.what();
  }
  release = true;
  EXPECT_THAT(refusal, HasSubstr("still open"));
  rt.wait_all();
  EXPECT_EQ(x, 201);
}

// Four threads submit chains on handles of their own and on one they share through commutes;
// each thread's order holds on its own handles.
TEST_P(DeferredRegistration, EachSubmittingThreadKeepsItsOwnOrder) {
  constexpr int threads = 4;
  constexpr int steps = 1000;
  std::vector<long> own(threads, 0);
  long shared = 0;
  auto s = rt.data(shared, "shared");
  std::vector<versa::Handle<long>> handles;
  for (int t = 0; t < threads; ++t) handles.push_back(rt.data(own[t]));
  std::vector<std::thread> submitters;
  for (int t = 0; t < threads; ++t)
    submitters.emplace_back([&, t] {
      for (int i = 0; i < steps; ++i) {
        // own = own * 3 + i (mod 2^31): any reordering changes the result.
        rt.submit(
            "step", [i](versa::Span<long> v) { v[0] = (v[0] * 3 + i) % 2147483647; },
            versa::write(handles[t]));
        rt.submit("count", add_one, versa::commute(s));
      }
    });
  for (std::thread& thread : submitters) thread.join();
  rt.wait_all();
  long expected = 0;
  for (int i = 0; i < steps; ++i) expected = (expected * 3 + i) % 2147483647;
  for (int t = 0; t < threads; ++t) EXPECT_EQ(own[t], expected) << "thread " << t;
  EXPECT_EQ(shared, threads * steps);
}

// A failure in a queued task cancels the tasks after it, as without deferral.
TEST_P(DeferredRegistration, AFailureCancelsTheQueuedTasksThatReadItsOutput) {
  long x = 0;
  std::atomic<int> ran_after{0};
  auto h = rt.data(x, "x");
  rt.submit(
      "fails", [](versa::Span<long>) { throw std::runtime_error("boom"); }, versa::write(h));
  for (int i = 0; i < 100; ++i)
    rt.submit(
        "reads", [&](versa::Span<const long>) { ran_after.fetch_add(1); }, versa::read(h));
  try {
    rt.wait_all();
    ADD_FAILURE() << "wait_all did not report the failure";
  } catch (const versa::TaskFailure& failure) {
    EXPECT_EQ(failure.task_name(), "fails");
    EXPECT_EQ(failure.cancelled_tasks(), 100u);
  }
  EXPECT_EQ(ran_after.load(), 0);
}

// A task without accesses is queued at once, ahead of the queued registrations of tasks
// submitted before it; a child it submits with accesses still comes after them. Many rounds:
// whoever takes the parent first (a worker, the waiting thread) takes it before registering.
TEST_P(DeferredRegistration, AChildOfATaskWithoutAccessesComesAfterTheTasksBeforeItsParent) {
  for (int round = 0; round < 50; ++round) {
    long x = 0;
    auto h = rt.data(x, "x");
    std::atomic<long> seen{-1};
    rt.submit(
        "set", [](versa::Span<long> v) { v[0] = 1; }, versa::write(h));
    rt.submit("parent", [&] {
      rt.spawn(
          "child", [&seen](versa::Span<const long> v) { seen = v[0]; }, versa::read(h));
    });
    rt.wait_all();
    ASSERT_EQ(seen.load(), 1) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, DeferredRegistration,
                         testing::Combine(testing::Values(1, 2, 4), testing::Bool()));

TEST(DeferredRegistrationConfig, ComesFromTheEnvironment) {
  {
    versa::testing_support::ScopedEnvironment set("VERSA_DEFER_REGISTRATION", "1");
    EXPECT_TRUE(versa::Config::from_environment({}).defer_registration);
  }
  {
    versa::testing_support::ScopedEnvironment set("VERSA_DEFER_REGISTRATION", "0");
    versa::Config config;
    config.defer_registration = true;
    EXPECT_FALSE(versa::Config::from_environment(config).defer_registration);
  }
  versa::testing_support::ScopedEnvironment set("VERSA_DEFER_REGISTRATION", "yes");
  try {
    (void)versa::Config::from_environment({});
    ADD_FAILURE() << "a bad value was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("VERSA_DEFER_REGISTRATION"), HasSubstr("yes")));
  }
}

}  // namespace
