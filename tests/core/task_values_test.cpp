// Task values (versa::value): each task of a type gets its own, at its place among the views, on
// CPU workers, on emulated devices and in spawned children; they are moved into the task when
// given as rvalues and destroyed once, with the task, whether it ran or was cancelled.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using versa::Placement;
using versa::Span;

// y[i] = factor * y[i] + shift * x[i] for i < count: two values around the views, so that a
// value given in the wrong place, or the wrong task's value, changes the result.
void scaled_update(double factor, Span<double> y, int count, Span<const double> x,
                   const double& shift) {
  for (int i = 0; i < count; ++i) y[i] = factor * y[i] + shift * x[i];
}

std::vector<double> updated_sequentially(std::vector<double> y, const std::vector<double>& x,
                                         int tasks) {
  for (int t = 0; t < tasks; ++t) {
    const int count = 1 + t % static_cast<int>(y.size());
    for (int i = 0; i < count; ++i) y[i] = (1.0 + 0.01 * t) * y[i] + (t - 3.0) * x[i];
  }
  return y;
}

void submit_updates(versa::Runtime& rt, const auto& type, versa::Handle<double>& y,
                    versa::Handle<double>& x, int size, int tasks) {
  for (int t = 0; t < tasks; ++t) {
    const int count = 1 + t % size;
    rt.submit(type, versa::value(1.0 + 0.01 * t), versa::write(y), versa::priority(t % 3),
              versa::value(count), versa::read(x), versa::value(t - 3.0));
  }
}

TEST(TaskValues, EachTaskGetsItsOwnValuesAtTheirPlaces) {
  constexpr int size = 7, tasks = 40;
  std::vector<double> y(size), x(size);
  for (int i = 0; i < size; ++i) {
    y[i] = 1.0 + i;
    x[i] = 0.5 * i - 1.0;
  }
  const std::vector<double> expected = updated_sequentially(y, x, tasks);
  versa::Runtime rt{versa::testing::workers(3)};
  auto hy = rt.data(y, "y");
  auto hx = rt.data(x, "x");
  submit_updates(rt, versa::task_type("update").cpu(scaled_update), hy, hx, size, tasks);
  rt.wait_all();
  for (int i = 0; i < size; ++i) EXPECT_DOUBLE_EQ(y[i], expected[i]) << i;
}

TEST(TaskValues, EmulatedImplementationsGetThemOnTheDevice) {
  constexpr int size = 5, tasks = 24;
  std::vector<double> y(size, 2.0), x(size, 3.0);
  const std::vector<double> expected = updated_sequentially(y, x, tasks);
  versa::Runtime rt{versa::testing::with_emulated(versa::testing::workers(1), 2)};
  auto hy = rt.data(y, "y");
  auto hx = rt.data(x, "x");
  std::atomic<int> on_device{0};
  const auto type = versa::task_type("update")
                        .cpu([](double, Span<double>, int, Span<const double>, const double&) {
                          FAIL() << "the CPU implementation ran a device-only task";
                        })
                        .emulated([&on_device](double f, Span<double> v, int n,
                                               Span<const double> w, const double& shift) {
                          ++on_device;
                          scaled_update(f, v, n, w, shift);
                        })
                        .placement(Placement::gpu_only);
  submit_updates(rt, type, hy, hx, size, tasks);
  rt.wait_all();
  EXPECT_EQ(on_device.load(), tasks);
  for (int i = 0; i < size; ++i) EXPECT_DOUBLE_EQ(y[i], expected[i]) << i;
}

TEST(TaskValues, SpawnedChildrenGetTheirsToo) {
  constexpr int children = 64;
  std::vector<long> slots(children, 0);
  versa::Runtime rt{versa::testing::workers(2)};
  auto h = rt.data(slots, "slots");
  const auto set =
      versa::task_type("set").cpu([](const std::string& label, Span<long> v, long index) {
        v[index] = index * 10 + long(label.size());
      });
  rt.submit("spawner", [&rt, &set, &h] {
    for (long i = 0; i < children; ++i)
      rt.spawn(set, versa::value(std::string(static_cast<std::size_t>(i % 5), 'x')),
               versa::write(h), versa::value(i));
    rt.sync();
  });
  rt.wait_all();
  for (long i = 0; i < children; ++i) EXPECT_EQ(slots[i], i * 10 + i % 5) << i;
}

// Counts the live objects of its kind; copies and moves count as objects of their own.
struct Counted {
  static inline std::atomic<int> live{0};
  static inline std::atomic<int> copies{0};
  int id;
  explicit Counted(int i) : id(i) { ++live; }
  Counted(const Counted& other) : id(other.id) {
    ++live;
    ++copies;
  }
  Counted(Counted&& other) noexcept : id(other.id) { ++live; }
  Counted& operator=(const Counted&) = delete;
  ~Counted() { --live; }
};

TEST(TaskValues, RvaluesAreMovedInAndEveryValueIsDestroyedOnceRunOrCancelled) {
  Counted::live = 0;
  Counted::copies = 0;
  std::vector<int> seen(8, -1);
  {
    versa::Runtime rt{versa::testing::workers(2)};
    auto h = rt.data(seen, "seen");
    double blocker = 0;
    auto hb = rt.data(blocker, "blocker");
    const auto record = versa::task_type("record").cpu(
        [](const std::unique_ptr<Counted>& owned, Span<int> v, const Counted& plain) {
          v[static_cast<std::size_t>(plain.id)] = owned->id;
        });
    for (int i = 0; i < 4; ++i)
      rt.submit(record, versa::value(std::make_unique<Counted>(100 + i)), versa::write(h),
                versa::value(Counted(i)));
    rt.wait_all();
    // Tasks that are cancelled because what they read failed destroy their values too.
    const auto fail = versa::task_type("fail").cpu(
        [](Span<double>) { throw std::runtime_error("fails on purpose"); });
    const auto after = versa::task_type("after").cpu(
        [](const Counted&, Span<const double>, Span<int>) { FAIL() << "ran after a failure"; });
    rt.submit(fail, versa::write(hb));
    for (int i = 4; i < 8; ++i)
      rt.submit(after, versa::value(Counted(i)), versa::read(hb), versa::write(h));
    EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  }
  EXPECT_EQ(Counted::live.load(), 0) << "a value was not destroyed, or destroyed twice";
  EXPECT_EQ(Counted::copies.load(), 0) << "an rvalue was copied instead of moved";
  for (int i = 0; i < 4; ++i) EXPECT_EQ(seen[i], 100 + i);
  for (int i = 4; i < 8; ++i) EXPECT_EQ(seen[i], -1);
}

TEST(TaskValues, LvaluesAreCopiedAndLeftAsTheyWere) {
  const std::vector<double> weights{1.0, 2.0, 3.0};
  double total = 0;
  versa::Runtime rt{versa::testing::workers(2)};
  auto h = rt.data(total, "total");
  const auto accumulate =
      versa::task_type("accumulate").cpu([](const std::vector<double>& w, Span<double> t) {
        for (double e : w) t[0] += e;
      });
  auto given = versa::value(weights);
  rt.submit(accumulate, given, versa::write(h));
  rt.submit(accumulate, given, versa::write(h));
  rt.wait_all();
  EXPECT_EQ(total, 12.0);
  EXPECT_EQ(given.value, weights) << "an lvalue value() was moved from";
}

}  // namespace
