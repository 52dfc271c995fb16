// Tasks submitted from many threads at once, more threads than have a count of their own: a
// thread's wait_all (or sync) returns only once the tasks it submitted before have run, whichever
// path the tasks take (tracked tasks take the general one, untracked ones without accesses the
// short one).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

// More than the 16 threads that count their submissions on their own line: the others share
// the runtime's count.
constexpr int submitting_threads = 20;
constexpr int rounds = 4;
constexpr int tasks_per_round = 500;

versa::Config config_for(int workers, bool tracked) {
  versa::Config config = versa::testing::workers(workers);
  config.track_tasks = tracked;
  return config;
}

class SubmittingThreadsTest : public testing::TestWithParam<std::tuple<int, bool>> {
 protected:
  versa::Runtime rt{config_for(std::get<0>(GetParam()), std::get<1>(GetParam()))};

  // Each thread submits rounds of tasks that count into its own counter and waits after each
  // with `wait`; returns, per thread, the first count it saw short after a wait (or the full
  // count when none was).
  template <class Submit, class Wait>
  std::vector<int> run_threads(Submit submit, Wait wait) {
    std::vector<std::atomic<int>> ran(submitting_threads);
    std::vector<int> seen(submitting_threads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < submitting_threads; ++t) {
      threads.emplace_back([&, t] {
        for (int round = 1; round <= rounds; ++round) {
          for (int i = 0; i < tasks_per_round; ++i)
            submit([&ran, t] { ran[t].fetch_add(1, std::memory_order_relaxed); });
          wait();
          seen[t] = ran[t].load(std::memory_order_relaxed);
          if (seen[t] != round * tasks_per_round) return;
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    rt.wait_all();
    for (int t = 0; t < submitting_threads; ++t)
      EXPECT_EQ(ran[t].load(), rounds * tasks_per_round) << "thread " << t;
    return seen;
  }
};

TEST_P(SubmittingThreadsTest, WaitAllOnEachThreadWaitsForWhatItSubmitted) {
  const std::vector<int> seen =
      run_threads([this](auto body) { rt.submit("count", body); }, [this] { rt.wait_all(); });
  for (int t = 0; t < submitting_threads; ++t)
    EXPECT_EQ(seen[t], rounds * tasks_per_round)
        << "thread " << t << " returned from wait_all early";
}

TEST_P(SubmittingThreadsTest, SyncOnEachThreadWaitsForWhatItSpawned) {
  const std::vector<int> seen =
      run_threads([this](auto body) { rt.spawn("count", body); }, [this] { rt.sync(); });
  for (int t = 0; t < submitting_threads; ++t)
    EXPECT_EQ(seen[t], rounds * tasks_per_round) << "thread " << t << " returned from sync early";
}

INSTANTIATE_TEST_SUITE_P(Workers, SubmittingThreadsTest,
                         testing::Combine(testing::Values(1, 2, 4), testing::Bool()),
                         [](const testing::TestParamInfo<std::tuple<int, bool>>& info) {
                           return std::to_string(std::get<0>(info.param)) + "Workers" +
                                  (std::get<1>(info.param) ? "Tracked" : "Untracked");
                         });

}  // namespace
