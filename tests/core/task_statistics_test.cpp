// Statistics per task type and device kind (Runtime::task_statistics): counts, kernel times
// and bytes moved, compared with what the program did.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

void spin_for(std::chrono::microseconds duration) {
  const auto end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end) {
  }
}

const versa::TaskStatistics* find(const std::vector<versa::TaskStatistics>& all,
                                  const std::string& type, const std::string& kind) {
  for (const auto& t : all)
    if (t.task_type == type && t.device_kind == kind) return &t;
  return nullptr;
}

class TaskStatisticsTest : public testing::TestWithParam<int> {};

TEST_P(TaskStatisticsTest, CountsAndTimesEachTypeOnTheCpu) {
  versa::Config config = versa::testing::workers(GetParam());
  config.task_statistics = true;
  versa::Runtime rt{config};
  int x = 0, y = 0;
  auto hx = rt.data(x), hy = rt.data(y);
  auto slow = versa::task_type("slow").cpu([](versa::Span<int> v) {
    spin_for(std::chrono::microseconds(2000));
    ++v[0];
  });
  for (int i = 0; i < 10; ++i) rt.submit(slow, versa::write(hx));
  for (int i = 0; i < 5; ++i)
    rt.submit(
        "quick", [](versa::Span<int> v) { ++v[0]; }, versa::write(hy));
  rt.submit(
      "fails", [](versa::Span<int>) { throw std::runtime_error("boom"); }, versa::write(hy));
  EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  const auto all = rt.task_statistics();
  ASSERT_EQ(all.size(), 2u) << "a failed task is not counted";
  const versa::TaskStatistics* s = find(all, "slow", "cpu");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->tasks, 10u);
  EXPECT_GE(s->kernel_seconds, 10 * 0.002);
  EXPECT_GE(s->median_kernel_seconds, 0.002);
  EXPECT_LE(s->median_kernel_seconds, s->kernel_seconds);
  const versa::TaskStatistics* q = find(all, "quick", "cpu");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->tasks, 5u);
  EXPECT_EQ(q->bytes_moved, 0u);
}

INSTANTIATE_TEST_SUITE_P(Workers, TaskStatisticsTest, testing::Values(1, 2, 4));

TEST(TaskStatistics, DeviceTasksCountUnderTheirKindWithTheBytesTheirInputsMoved) {
  versa::Config config = versa::testing::with_emulated(versa::testing::workers(1), 1);
  config.task_statistics = true;
  versa::Runtime rt{config};
  std::vector<double> a(1000, 1.0), b(1000, 0.0);
  auto ha = rt.data(a), hb = rt.data(b);
  auto axpy = versa::task_type("axpy")
                  .cpu([](versa::Span<const double> x, versa::Span<double> y) {
                    for (std::size_t i = 0; i < y.size(); ++i) y[i] += x[i];
                  })
                  .placement(versa::Placement::gpu_only);
  for (int i = 0; i < 3; ++i) rt.submit(axpy, versa::read(ha), versa::write(hb));
  rt.wait_all();
  EXPECT_EQ(b[0], 3.0);
  const auto all = rt.task_statistics();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].task_type, "axpy");
  EXPECT_EQ(all[0].device_kind, "emulated");
  EXPECT_EQ(all[0].tasks, 3u);
  // The first task copies both inputs in; the others find them there.
  EXPECT_EQ(all[0].bytes_moved, 2 * 1000 * sizeof(double));
}

TEST(TaskStatistics, OffByDefault) {
  versa::Runtime rt{versa::testing::workers(1)};
  rt.submit("task", [] {});
  rt.wait_all();
  EXPECT_TRUE(rt.task_statistics().empty());
}

}  // namespace
