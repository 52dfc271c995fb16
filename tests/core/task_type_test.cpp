// Task types are immutable values: every builder method returns a new type and leaves the one it
// is called on as it was, so one type may be submitted from several threads while others build
// new types from it.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

// Declared and defined nowhere, like a kernel wrapper whose .cu file only CUDA builds compile.
// External linkage, like such a wrapper: the compiler may not assume it is missing.
void kernel_defined_only_with_cuda(versa::CudaContext& gpu, double* data, int count);

namespace {

using versa::Placement;
using versa::Span;

void add_one(Span<double> x) {
  for (double& e : x) e += 1;
}

TEST(TaskType, PlacementReturnsANewTypeAndLeavesTheOriginal) {
  // No accelerator: a gpu_only type is refused at submit, anything else runs on the CPU.
  versa::Runtime rt{versa::testing::workers(1)};
  double value = 0;
  auto h = rt.data(value);
  const auto anywhere = versa::task_type("bump").cpu(add_one);
  const auto device_only = anywhere.placement(Placement::gpu_only);
  const auto cpu_only = device_only.placement(Placement::cpu_only);
  EXPECT_THROW(rt.submit(device_only, versa::write(h)), std::invalid_argument);
  rt.submit(anywhere, versa::write(h));
  rt.submit(cpu_only, versa::write(h));
  EXPECT_THROW(rt.submit(device_only, versa::write(h)), std::invalid_argument)
      << "building cpu_only from it changed it";
  rt.wait_all();
  EXPECT_EQ(value, 2.0);
  EXPECT_EQ(device_only.name(), "bump");
}

TEST(TaskType, ReductionReturnsANewTypeAndLeavesTheOriginal) {
  versa::Runtime rt{versa::testing::workers(2)};
  double total = 0, other = 0;
  auto h = rt.data(total);
  auto h_other = rt.data(other);
  const auto plain = versa::task_type("add one").cpu(add_one).placement(Placement::cpu_only);
  const auto summing = plain.reduction(versa::sum<double>());
  // Neither the handle nor `plain` has an operator.
  EXPECT_THROW(rt.submit(plain, versa::add(h)), std::invalid_argument);
  for (int i = 0; i < 10; ++i) rt.submit(summing, versa::add(h));
  EXPECT_THROW(rt.submit(plain, versa::add(h_other)), std::invalid_argument)
      << "building `summing` gave `plain` an operator";
  rt.wait_all();
  EXPECT_EQ(total, 10.0);
  EXPECT_EQ(other, 0.0);
}

TEST(TaskType, ImplementationsReturnANewTypeAndLeaveTheOriginal) {
  versa::Runtime rt{versa::testing::workers(1)};
  double value = 0;
  auto h = rt.data(value);
  const auto once = versa::task_type("step").cpu(add_one).placement(Placement::cpu_only);
  const auto twice = once.cpu([](Span<double> x) { x[0] += 2; });
  rt.submit(once, versa::write(h));
  rt.submit(twice, versa::write(h));
  rt.wait_all();
  EXPECT_EQ(value, 3.0);
}

TEST(TaskType, CudaBodyIsKeptOnlyWithTheCudaBackend) {
  const auto cpu = versa::task_type("step").cpu(add_one).placement(Placement::cpu_only);
  const auto both = cpu.cuda([](versa::CudaContext&, Span<double>) {});
  static_assert(std::is_same_v<decltype(both), decltype(cpu)> == !VERSA_HAVE_CUDA,
                "without the backend .cuda(f) leaves the type as it was");
  if constexpr (!versa::detail::cuda_backend) {
    // The body is dropped unseen: this links although the function it calls is defined nowhere.
    const auto dropped = cpu.cuda([](versa::CudaContext& gpu, Span<double> x) {
      kernel_defined_only_with_cuda(gpu, x.data(), static_cast<int>(x.size()));
    });
    versa::Runtime rt{versa::testing::workers(1)};
    double value = 0;
    auto h = rt.data(value);
    rt.submit(dropped, versa::write(h));
    rt.wait_all();
    EXPECT_EQ(value, 1.0);
  }
}

class TaskTypeThreads : public ::testing::TestWithParam<int> {};

// Submitters count with `base` into their own handles while builders derive types from it:
// ones that would break the submitters' tasks if they changed `base` (gpu_only is refused on a
// machine without accelerators; another operator conflicts with the one the handles were bound
// to), and ones they submit themselves. Under ThreadSanitizer this also shows that submitting a
// type reads nothing that building from it writes.
TEST_P(TaskTypeThreads, SubmittingWhileOtherThreadsBuildFromTheSameType) {
  versa::Runtime rt{versa::testing::workers(GetParam())};
  constexpr int submitters = 2, builders = 2, tasks = 1000;
  const auto base = versa::task_type("count").cpu(add_one).reduction(versa::sum<double>());
  const auto product = versa::Reduction<double>("product")
                           .identity([](Span<double> p) {
                             for (double& e : p) e = 1;
                           })
                           .merge([](Span<double> into, Span<const double> from) {
                             for (std::size_t i = 0; i < into.size(); ++i) into[i] *= from[i];
                           });

  std::vector<double> counts(submitters, 0.0), derived_counts(builders, 0.0);
  std::vector<versa::Handle<double>> counted, derived;
  for (double& c : counts) counted.push_back(rt.data(c));
  for (double& c : derived_counts) derived.push_back(rt.data(c));
  std::vector<int> derived_tasks(builders, 0);
  std::vector<std::string> errors(submitters + builders);
  std::atomic<int> submitting{submitters};
  std::latch start(submitters + builders);  // so that submitting and building overlap

  std::vector<std::thread> threads;
  for (int s = 0; s < submitters; ++s)
    threads.emplace_back([&, s] {
      start.arrive_and_wait();
      try {
        for (int k = 0; k < tasks; ++k) rt.submit(base, versa::add(counted[s]));
      } catch (const std::exception& e) {
        errors[s] = e.what();
      }
      submitting.fetch_sub(1, std::memory_order_release);
    });
  for (int b = 0; b < builders; ++b)
    threads.emplace_back([&, b] {
      start.arrive_and_wait();
      try {
        // At least a few rounds, however fast the submitters are.
        for (int round = 0; round < 16 || submitting.load(std::memory_order_acquire) > 0; ++round) {
          const auto refused = base.placement(Placement::gpu_only);
          const auto conflicting = base.reduction(product).cpu(add_one);
          const auto by_two =
              base.placement(Placement::cpu_only).cpu([](Span<double> x) { x[0] += 2; });
          if (refused.name() != "count" || conflicting.name() != "count")
            throw std::logic_error("a derived type lost its name");
          // A few, not one per round: the runtime keeps every type it has run.
          if (round % 8 == 0) {
            rt.submit(by_two, versa::add(derived[b]));
            ++derived_tasks[b];
          }
        }
      } catch (const std::exception& e) {
        errors[submitters + b] = e.what();
      }
    });
  for (std::thread& thread : threads) thread.join();
  rt.wait_all();

  for (const std::string& error : errors) EXPECT_EQ(error, "");
  for (double c : counts) EXPECT_EQ(c, tasks);
  for (int b = 0; b < builders; ++b) EXPECT_EQ(derived_counts[b], 2.0 * derived_tasks[b]);
}

INSTANTIATE_TEST_SUITE_P(TaskType, TaskTypeThreads, ::testing::Values(1, 2, 4),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "_workers";
                         });

}  // namespace
