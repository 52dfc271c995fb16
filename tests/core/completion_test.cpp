// Tasks that finish after their body (versa::detach, versa::Completion): the accesses are held
// until the body has returned and every Completion is completed or failed, from any thread;
// dependents and wait_all wait for that; failures spoil the outputs; nothing hangs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using versa::testing::workers;

// A thread that completes (or fails) the Completions handed to it, in order, each after a
// short delay: the asynchronous operation of the tests.
class Completer {
 public:
  Completer()
      : thread_([this] {
          std::unique_lock lock(mutex_);
          for (;;) {
            ready_.wait(lock, [this] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) return;
            Job job = std::move(queue_.front());
            queue_.pop_front();
            lock.unlock();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            if (job.work) job.work();
            auto& [completion, error] = job.end;
            if (error)
              completion.fail(error);
            else
              completion.complete();
            lock.lock();
          }
        }) {}
  ~Completer() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    ready_.notify_all();
    thread_.join();
  }
  // Runs `work`, then completes `completion` (fails it with `error` when there is one).
  void post(versa::Completion completion, std::exception_ptr error = nullptr,
            std::function<void()> work = {}) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(Job{std::move(work), {std::move(completion), std::move(error)}});
    }
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  struct Job {
    std::function<void()> work;
    std::pair<versa::Completion, std::exception_ptr> end;
  };
  std::deque<Job> queue_;
  bool stop_ = false;
  std::thread thread_;  // last: it uses the members above
};

std::optional<std::string> failure_of_wait_all(versa::Runtime& rt) {
  try {
    rt.wait_all();
  } catch (const versa::TaskFailure& failure) {
    return std::string(failure.what());
  }
  return std::nullopt;
}

class CompletionTest : public ::testing::TestWithParam<int> {};

// The value is written by the "asynchronous operation" after the body returned; the reader
// submitted after must see it, and so must the main program after wait_all.
TEST_P(CompletionTest, DependentsWaitForTheCompletionFromAnotherThread) {
  versa::Runtime rt(workers(GetParam()));
  Completer completer;
  constexpr int rounds = 200;
  std::vector<long> values(4, 0);
  auto h = rt.data(values, "values");
  long seen_sum = 0;
  auto seen = rt.data(seen_sum, "seen");
  for (int r = 0; r < rounds; ++r) {
    rt.submit(
        "async increment",
        [&completer](versa::Span<long> v) {
          // Written later, by the completer thread, after the body has returned.
          long* data = v.data();
          completer.post(versa::detach(), nullptr, [data] {
            for (int i = 0; i < 4; ++i) ++data[i];
          });
        },
        versa::write(h));
    rt.submit(
        "check",
        [r](versa::Span<const long> v, versa::Span<long> s) {
          if (v[0] != r + 1) throw std::runtime_error("read before the completion");
          s[0] += v[0];
        },
        versa::read(h), versa::write(seen));
  }
  EXPECT_EQ(failure_of_wait_all(rt), std::nullopt);
  EXPECT_EQ(values, std::vector<long>(4, rounds));
  EXPECT_EQ(seen_sum, rounds * (rounds + 1) / 2);
}

// wait_all returns only once the Completion is complete, even when the body has long returned.
TEST_P(CompletionTest, WaitAllWaitsForTheCompletion) {
  versa::Runtime rt(workers(GetParam()));
  std::atomic<bool> completed{false};
  std::optional<versa::Completion> kept;
  std::mutex kept_mutex;
  std::atomic<bool> body_returned{false};
  rt.submit("detached", [&] {
    std::lock_guard lock(kept_mutex);
    kept.emplace(versa::detach());
    body_returned = true;
  });
  std::thread later([&] {
    while (!body_returned) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    completed = true;
    std::lock_guard lock(kept_mutex);
    kept->complete();
  });
  rt.wait_all();
  EXPECT_TRUE(completed.load());
  later.join();
}

// Several Completions: the task ends with the last one, whichever thread releases it.
TEST_P(CompletionTest, SeveralCompletionsEndTheTaskWithTheLast) {
  versa::Runtime rt(workers(GetParam()));
  Completer completer;
  int value = 0;
  auto h = rt.data(value, "value");
  std::atomic<int> released{0};
  rt.submit(
      "three holds",
      [&](versa::Span<int>) {
        for (int i = 0; i < 3; ++i) completer.post(versa::detach(), nullptr, [&] { ++released; });
      },
      versa::write(h));
  int released_before_reader = -1;
  rt.submit(
      "after", [&](versa::Span<const int>) { released_before_reader = released.load(); },
      versa::read(h));
  rt.wait_all();
  EXPECT_EQ(released_before_reader, 3);
}

// Completing inside the body itself: the task ends when the body returns, as any task.
TEST_P(CompletionTest, CompletedInsideTheBody) {
  versa::Runtime rt(workers(GetParam()));
  int value = 0;
  auto h = rt.data(value, "value");
  for (int i = 0; i < 1000; ++i)
    rt.submit(
        "inline",
        [](versa::Span<int> v) {
          versa::Completion done = versa::detach();
          ++v[0];
          done.complete();
        },
        versa::write(h));
  rt.wait_all();
  EXPECT_EQ(value, 1000);
}

// fail() makes the task a failure: wait_all throws it, readers of its output are cancelled,
// and a write_only after it makes the data valid again.
TEST_P(CompletionTest, FailSpoilsTheOutputsAndCancelsDependents) {
  versa::Runtime rt(workers(GetParam()));
  Completer completer;
  int value = 0;
  auto h = rt.data(value, "value");
  std::atomic<int> readers_run{0};
  rt.submit(
      "receive",
      [&](versa::Span<int>) {
        completer.post(versa::detach(),
                       std::make_exception_ptr(std::runtime_error("transfer lost")));
      },
      versa::write(h));
  rt.submit(
      "reader", [&](versa::Span<const int>) { ++readers_run; }, versa::read(h));
  const auto failure = failure_of_wait_all(rt);
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->find("task 'receive' failed: transfer lost"), std::string::npos) << *failure;
  EXPECT_EQ(readers_run.load(), 0);
  rt.submit(
      "overwrite", [](versa::Span<int> v) { v[0] = 7; }, versa::write_only(h));
  rt.submit(
      "reader", [&](versa::Span<const int>) { ++readers_run; }, versa::read(h));
  EXPECT_EQ(failure_of_wait_all(rt), std::nullopt);
  EXPECT_EQ(readers_run.load(), 1);
  EXPECT_EQ(value, 7);
}

// A body that throws after detaching fails, and still finishes only with its Completion.
TEST_P(CompletionTest, BodyThrowsAfterDetaching) {
  versa::Runtime rt(workers(GetParam()));
  Completer completer;
  int value = 0;
  auto h = rt.data(value, "value");
  std::atomic<bool> completed{false};
  rt.submit(
      "throws",
      [&](versa::Span<int>) {
        completer.post(versa::detach(), nullptr, [&] { completed = true; });
        throw std::runtime_error("body failed");
      },
      versa::write(h));
  const auto failure = failure_of_wait_all(rt);
  EXPECT_TRUE(completed.load());
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->find("body failed"), std::string::npos);
}

// A Completion dropped without complete() or fail() fails its task instead of hanging.
TEST_P(CompletionTest, DroppedCompletionFailsTheTask) {
  versa::Runtime rt(workers(GetParam()));
  int value = 0;
  auto h = rt.data(value, "value");
  rt.submit(
      "drops", [](versa::Span<int>) { versa::Completion lost = versa::detach(); }, versa::write(h));
  const auto failure = failure_of_wait_all(rt);
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->find("destroyed without complete() or fail()"), std::string::npos);
}

// A task cancelled by a failure before it never runs its body, so never detaches; versions
// still advance and nothing hangs.
TEST_P(CompletionTest, CancelledTaskNeverDetaches) {
  versa::Runtime rt(workers(GetParam()));
  int value = 0;
  auto h = rt.data(value, "value");
  std::atomic<int> bodies{0};
  rt.submit(
      "fails", [](versa::Span<int>) { throw std::runtime_error("first"); }, versa::write(h));
  rt.submit(
      "would detach",
      [&](versa::Span<int>) {
        ++bodies;
        versa::detach().complete();
      },
      versa::write(h));
  EXPECT_TRUE(failure_of_wait_all(rt).has_value());
  EXPECT_EQ(bodies.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Workers, CompletionTest, ::testing::Values(1, 2, 4));

// With the waiting thread as a worker (Config::caller_runs_tasks), bodies that run on it detach
// as on any worker; a chain of detached writes keeps its order.
// A Completion completed on a thread of the program's, which may still be in the runtime when
// the last task's finish ends wait_all: destroying the runtime right after waits for it to
// leave (the sanitizer builds see a use after free otherwise).
TEST(Completion, TheRuntimeOutlivesACompletionsLastFinish) {
  for (int round = 0; round < 200; ++round) {
    std::thread completer;
    {
      versa::Runtime rt{workers(2)};
      long x = 0;
      auto h = rt.data(x, "x");
      rt.submit(
          "detached",
          [&completer](versa::Span<long> v) {
            v[0] = 1;
            completer = std::thread([done = versa::detach()]() mutable { done.complete(); });
          },
          versa::write(h));
      rt.wait_all();
      EXPECT_EQ(x, 1);
    }
    completer.join();
  }
}

TEST(Completion, DetachOnTheWaitingThread) {
  versa::Config config = workers(2);
  config.caller_runs_tasks = true;
  versa::Runtime rt(config);
  Completer completer;
  std::uint64_t value = 0;
  auto h = rt.data(value, "value");
  for (int i = 0; i < 500; ++i)
    rt.submit(
        "async step",
        [&completer, i](versa::Span<std::uint64_t> v) {
          std::uint64_t* data = v.data();
          completer.post(versa::detach(), nullptr,
                         [data, i] { *data = *data * 3 + static_cast<std::uint64_t>(i); });
        },
        versa::write(h));
  rt.wait_all();
  std::uint64_t expected = 0;  // wraps: unsigned
  for (int i = 0; i < 500; ++i) expected = expected * 3 + static_cast<std::uint64_t>(i);
  EXPECT_EQ(value, expected);
}

TEST(Completion, DetachOutsideATaskIsRefused) {
  versa::Runtime rt(workers(1));
  EXPECT_THROW(versa::detach(), std::logic_error);
  versa::Completion empty;
  EXPECT_FALSE(empty);
  EXPECT_THROW(empty.complete(), std::logic_error);
}

}  // namespace
