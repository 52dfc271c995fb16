// Config::submission_window: a thread that submits more ready tasks than the window runs the
// newest of them itself, in the waiting thread's worker slot, so that no more than a window of
// them waits; with no limit it runs none.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "support/scoped_environment.hpp"
#include "versa/versa.hpp"

namespace {

constexpr int window = 64;
constexpr int burst = 400;

versa::Config with_window(int submission_window) {
  versa::Config config = versa::testing::workers(2);
  config.caller_runs_tasks = true;
  config.submission_window = submission_window;
  return config;
}

// The one worker thread is held by a task until the burst is submitted, so only the submitting
// thread can run tasks meanwhile: the tasks it runs are all that keep the backlog in the window.
struct HeldWorker {
  explicit HeldWorker(versa::Runtime& rt) {
    rt.submit("hold the worker", [this] {
      started.store(true);
      while (!released.load()) std::this_thread::yield();
    });
    while (!started.load()) std::this_thread::yield();
  }
  std::atomic<bool> started{false}, released{false};
};

// Submits `burst` tasks, each reading `shared` when `with_access`; returns how many ran on this
// thread before the burst was submitted. Every task runs exactly once.
int run_during_submission(int submission_window, bool with_access) {
  versa::Runtime rt{with_window(submission_window)};
  auto shared = rt.token("shared");
  HeldWorker held(rt);
  const std::thread::id main = std::this_thread::get_id();
  std::atomic<bool> submitting{true};
  std::atomic<int> early{0};
  std::vector<std::atomic<int>> runs(burst);
  for (int i = 0; i < burst; ++i) {
    auto body = [&, i] {
      runs[i].fetch_add(1);
      if (submitting.load() && std::this_thread::get_id() == main) early.fetch_add(1);
    };
    if (with_access) {
      rt.submit("reader", body, versa::read(shared));
    } else {
      rt.submit("plain", body);
    }
  }
  submitting.store(false);
  held.released.store(true);
  rt.wait_all();
  for (int i = 0; i < burst; ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i;
  return early.load();
}

TEST(SubmissionWindow, SubmitRunsTasksBeyondTheWindowOnTheSubmittingThread) {
  EXPECT_GE(run_during_submission(window, false), burst - window);
}

TEST(SubmissionWindow, TasksWithAccessesCountToo) {
  EXPECT_GE(run_during_submission(window, true), burst - window);
}

TEST(SubmissionWindow, WithNoLimitSubmitRunsNoTask) {
  EXPECT_EQ(run_during_submission(0, false), 0);
  EXPECT_EQ(run_during_submission(0, true), 0);
}

// Without the waiting thread's slot (caller_runs_tasks off, or one worker) there is no window.
TEST(SubmissionWindow, WithoutTheCallersSlotSubmitRunsNoTask) {
  for (const bool one_worker : {false, true}) {
    versa::Config config = with_window(window);
    if (one_worker) {
      config.cpu_workers = 1;
    } else {
      config.caller_runs_tasks = false;
    }
    versa::Runtime rt{config};
    const std::thread::id main = std::this_thread::get_id();
    std::atomic<int> on_main{0};
    for (int i = 0; i < burst; ++i)
      rt.submit("where", [&] {
        std::this_thread::sleep_for(std::chrono::microseconds(1));
        on_main += std::this_thread::get_id() == main;
      });
    rt.wait_all();
    EXPECT_EQ(on_main.load(), 0) << "one worker: " << one_worker;
  }
}

// A task that submit() runs may itself spawn and sync, and submit: those go to the slot's own
// deque and run before submission goes on or are taken by the workers.
TEST(SubmissionWindow, TasksRunInsideSubmitMaySpawnSyncAndSubmit) {
  versa::Runtime rt{with_window(window)};
  std::atomic<long> sum{0};
  {
    HeldWorker held(rt);
    for (int i = 0; i < burst; ++i)
      rt.submit("parent", [&rt, &sum, i] {
        rt.spawn("child", [&sum, i] { sum.fetch_add(i); });
        rt.sync();
        rt.submit("late", [&sum] { sum.fetch_add(1); });
      });
    held.released.store(true);
    rt.wait_all();
  }
  EXPECT_EQ(sum.load(), long{burst} * (burst - 1) / 2 + burst);
}

TEST(SubmissionWindow, BadValuesAreRefusedNamingTheFieldOrVariable) {
  for (const int bad : {-2, 1, 63}) {
    versa::Config config;
    config.submission_window = bad;
    try {
      versa::Config::from_environment(config);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("Config::submission_window"), std::string::npos);
    }
  }
  for (const char* bad : {"32", "-2", "many"}) {
    const versa::testing_support::ScopedEnvironment env("VERSA_SUBMISSION_WINDOW", bad);
    try {
      versa::Config::from_environment({});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("VERSA_SUBMISSION_WINDOW='" + std::string(bad) + "'"),
                std::string::npos)
          << e.what();
    }
  }
  for (const char* good : {"-1", "0", "64", "100000"}) {
    const versa::testing_support::ScopedEnvironment env("VERSA_SUBMISSION_WINDOW", good);
    EXPECT_EQ(versa::Config::from_environment({}).submission_window, std::stoi(good));
  }
}

}  // namespace
