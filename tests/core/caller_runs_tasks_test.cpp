// Config::caller_runs_tasks: the thread that waits runs ready tasks as one of the workers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "support/scoped_environment.hpp"
#include "versa/versa.hpp"

namespace {

versa::Config caller_works(int workers) {
  versa::Config config = versa::testing::workers(workers);
  config.caller_runs_tasks = true;
  return config;
}

TEST(CallerRunsTasks, TheCallerIsOneOfTheWorkers) {
  EXPECT_EQ(versa::Runtime{caller_works(4)}.cpu_workers(), 4);
  EXPECT_EQ(versa::Runtime{caller_works(2)}.cpu_workers(), 2);
  EXPECT_EQ(versa::Runtime{caller_works(1)}.cpu_workers(), 1);
}

// One worker is one thread, and it runs every task: the caller never does.
TEST(CallerRunsTasks, WithOneWorkerTheWaitingThreadRunsNoTask) {
  versa::Runtime rt{caller_works(1)};
  const std::thread::id main = std::this_thread::get_id();
  std::atomic<int> on_main{0};
  for (int i = 0; i < 200; ++i)
    rt.submit("where", [&] { on_main += std::this_thread::get_id() == main; });
  rt.wait_all();
  for (int i = 0; i < 20; ++i) {
    rt.spawn("where", [&] { on_main += std::this_thread::get_id() == main; });
    rt.sync();
  }
  EXPECT_EQ(on_main.load(), 0);
}

// The one worker thread is held by a task that waits for a second one: only the thread in
// wait_all() can run that, so the program ends only if it does.
void expect_the_waiting_thread_runs(bool spawn) {
  versa::Runtime rt{caller_works(2)};
  std::atomic<bool> started{false}, released{false};
  const std::thread::id main = std::this_thread::get_id();
  std::thread::id ran_on;
  rt.submit("hold the worker", [&] {
    started.store(true);
    while (!released.load()) std::this_thread::yield();
  });
  while (!started.load()) std::this_thread::yield();
  auto release = [&] {
    ran_on = std::this_thread::get_id();
    released.store(true);
  };
  if (spawn) {
    rt.spawn("release", release);
    rt.sync();
  } else {
    rt.submit("release", release);
  }
  rt.wait_all();
  EXPECT_EQ(ran_on, main);
}

TEST(CallerRunsTasks, WaitAllRunsTasksOnTheWaitingThread) { expect_the_waiting_thread_runs(false); }

TEST(CallerRunsTasks, SyncOutsideTasksRunsTasksOnTheWaitingThread) {
  expect_the_waiting_thread_runs(true);
}

// Tasks the caller made ready and left behind when it stopped waiting (it stops as soon as its
// condition holds) are run by the worker threads, with nobody waiting.
TEST(CallerRunsTasks, WorkLeftByTheCallerIsTakenByTheWorkers) {
  versa::Runtime rt{caller_works(3)};
  for (int round = 0; round < 20; ++round) {
    std::vector<std::atomic<int>> values(64);
    rt.spawn("parent", [&] {
      for (std::atomic<int>& v : values) rt.submit("child", [&v] { v.store(1); });
    });
    rt.sync();  // the parent only: its children were submitted, not spawned
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    int done = 0;
    while (done < 64 && std::chrono::steady_clock::now() < deadline) {
      done = 0;
      for (const std::atomic<int>& v : values) done += v.load();
      std::this_thread::yield();
    }
    ASSERT_EQ(done, 64) << "round " << round;
    rt.wait_all();
  }
}

TEST(CallerRunsTasks, EnvironmentTurnsItOnAndOff) {
  {
    const versa::testing_support::ScopedEnvironment env("VERSA_CALLER_WORKS", "1");
    versa::Config base;
    base.caller_runs_tasks = false;
    EXPECT_TRUE(versa::Config::from_environment(base).caller_runs_tasks);
  }
  {
    const versa::testing_support::ScopedEnvironment env("VERSA_CALLER_WORKS", "0");
    versa::Config base;
    base.caller_runs_tasks = true;
    EXPECT_FALSE(versa::Config::from_environment(base).caller_runs_tasks);
  }
  const versa::testing_support::ScopedEnvironment env("VERSA_CALLER_WORKS", "yes");
  EXPECT_THROW(versa::Config::from_environment({}), std::invalid_argument);
}

}  // namespace
