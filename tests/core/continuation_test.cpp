// A task made ready by the task a worker just finished runs next on that worker (its
// continuation), without a queue round trip or another worker woken for it.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

// A chain of writers of one handle, all submitted before the first may start: each becomes
// ready when the one before it finishes, so each is a continuation, which no idle worker can
// steal: the whole chain runs on the worker that ran the first, in order.
TEST(Continuation, AChainOfWritersRunsOnOneWorker) {
  versa::Runtime rt{versa::testing::workers(4)};
  for (int round = 0; round < 10; ++round) {
    std::atomic<bool> submitted{false};
    long value = 0;
    auto h = rt.data(&value, 1);
    std::vector<std::thread::id> ran_on(200);
    rt.submit(
        "gate",
        [&](versa::Span<long>) {
          while (!submitted.load()) std::this_thread::yield();
        },
        versa::write(h));
    for (std::size_t i = 0; i < ran_on.size(); ++i)
      rt.submit(
          "link",
          [&ran_on, i](versa::Span<long> v) {
            v[0] += 1;
            ran_on[i] = std::this_thread::get_id();
          },
          versa::write(h));
    submitted.store(true);
    rt.wait_all();
    EXPECT_EQ(value, 200);
    for (std::size_t i = 1; i < ran_on.size(); ++i)
      ASSERT_EQ(ran_on[i], ran_on[0]) << "round " << round << ", link " << i;
  }
}

// Several tasks made ready at once: one continues on the worker, the others go to its deque,
// where the idle workers steal them; every one runs once.
TEST(Continuation, TheOtherTasksMadeReadyAreSharedOut) {
  versa::Runtime rt{versa::testing::workers(4)};
  long value = 0;
  auto h = rt.data(&value, 1);
  std::atomic<int> runs{0};
  rt.submit(
      "writer", [](versa::Span<long> v) { v[0] = 7; }, versa::write(h));
  std::vector<long> seen(64, 0);
  for (long& s : seen)
    rt.submit(
        "reader",
        [&runs, &s](versa::Span<const long> v) {
          s = v[0];
          runs.fetch_add(1);
        },
        versa::read(h));
  rt.wait_all();
  EXPECT_EQ(runs.load(), 64);
  for (long s : seen) EXPECT_EQ(s, 7);
}

}  // namespace
