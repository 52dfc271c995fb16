// Reductions: add accesses renamed into partial buffers and merged lazily (DESIGN.md section 4).
// Every program is compared with a sequential run of the same contributions: exactly for
// integers, to rounding for doubles, on CPU workers and on CPU + emulated devices.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/names.hpp"
#include "support/config.hpp"
#include "support/eventually.hpp"
#include "support/gate.hpp"
#include "support/message_of.hpp"
#include "versa/versa.hpp"

namespace {

using versa::Placement;
using versa::Span;
using namespace std::chrono_literals;

constexpr std::size_t width = 64;  // elements per handle

struct Machine {
  int workers;
  int devices;
  std::size_t device_memory;  // per device
};

versa::Config config_of(const Machine& s) {
  versa::Config config = versa::testing::workers(s.workers);
  return s.devices ? versa::testing::with_emulated(config, s.devices, s.device_memory) : config;
}

// One step of a random program over a few integer handles: an add of a random contribution,
// an occasional read that records what it saw, or an occasional write that scales the data
// (not commutative with the adds, so a run boundary crossed shows).
struct Step {
  enum Kind { add, read, write } kind;
  int handle;
  long value;
};

std::vector<Step> random_program(std::uint64_t seed, int steps, int handles) {
  std::mt19937_64 rng(seed);
  std::vector<Step> program;
  for (int i = 0; i < steps; ++i) {
    const int roll = static_cast<int>(rng() % 100);
    const Step::Kind kind = roll < 90 ? Step::add : roll < 96 ? Step::read : Step::write;
    program.push_back({kind, static_cast<int>(rng() % handles), static_cast<long>(rng() % 1000)});
  }
  return program;
}

// Element k of an add's contribution.
long contribution(const Step& step, std::size_t k) { return step.value * static_cast<long>(k + 1); }

// What a write does to an element: it does not commute with the adds, and keeps the values
// small, so that no sum overflows.
long scramble(long e) { return (e * 3 + 1) % 1000003; }

struct Outcome {
  std::vector<std::vector<long>> data;
  std::vector<long> seen;  // per step: what a read saw in element 1 (0 for other steps)
};

Outcome sequential(const std::vector<Step>& program, int handles) {
  Outcome out{std::vector<std::vector<long>>(handles, std::vector<long>(width, 1)),
              std::vector<long>(program.size(), 0)};
  for (std::size_t i = 0; i < program.size(); ++i) {
    std::vector<long>& v = out.data[program[i].handle];
    switch (program[i].kind) {
      case Step::add:
        for (std::size_t k = 0; k < width; ++k) v[k] += contribution(program[i], k);
        break;
      case Step::read:
        out.seen[i] = v[1];
        break;
      case Step::write:
        for (long& e : v) e = scramble(e);
        break;
    }
  }
  return out;
}

class ReductionPrograms : public testing::TestWithParam<Machine> {};

TEST_P(ReductionPrograms, ThousandsOfAddsEqualTheSequentialSums) {
  const Machine setup = GetParam();
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const int handles = seed == 1 ? 1 : 3;
    const std::vector<Step> program = random_program(seed * 31 + setup.workers, 3000, handles);
    // Set with sum<long>() through the handles: bound before any add is submitted.
    const Outcome expected = sequential(program, handles);
    versa::Config config = config_of(setup);
    Outcome actual;
    {
      actual = Outcome{std::vector<std::vector<long>>(handles, std::vector<long>(width, 1)),
                       std::vector<long>(program.size(), 0)};
      versa::Runtime rt{config};
      std::vector<versa::Handle<long>> h;
      for (auto& v : actual.data) {
        h.push_back(rt.data(v));
        h.back().set_reduction(versa::sum<long>());
      }
      const Placement rule = setup.devices ? Placement::automatic : Placement::cpu_only;
      for (std::size_t i = 0; i < program.size(); ++i) {
        const Step* step = &program[i];
        switch (step->kind) {
          case Step::add:
            rt.submit(
                "add",
                [step](Span<long> v) {
                  for (std::size_t k = 0; k < v.size(); ++k) v[k] += contribution(*step, k);
                },
                versa::placement(rule), versa::add(h[step->handle]));
            break;
          case Step::read:
            rt.submit(
                "read", [seen = &actual.seen[i]](Span<const long> v) { *seen = v[1]; },
                versa::placement(rule), versa::read(h[step->handle]));
            break;
          case Step::write:
            rt.submit(
                "write",
                [](Span<long> v) {
                  for (long& e : v) e = scramble(e);
                },
                versa::placement(rule), versa::write(h[step->handle]));
            break;
        }
      }
      rt.wait_all();
      EXPECT_EQ(rt.reduction_memory_bytes(), 0u) << "partial buffers kept after wait_all";
      if (setup.devices) {
        const auto stats = rt.statistics();
        std::uint64_t on_devices = 0;
        for (std::size_t d = 1; d < stats.size(); ++d) on_devices += stats[d].tasks;
        EXPECT_GT(on_devices, 0u) << "no task ran on the emulated devices";
      }
    }
    ASSERT_EQ(actual.data, expected.data) << "seed " << seed;
    ASSERT_EQ(actual.seen, expected.seen) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Machines, ReductionPrograms,
                         testing::Values(Machine{1, 0, 0}, Machine{2, 0, 0}, Machine{4, 0, 0},
                                         Machine{2, 1, 64 << 10}, Machine{2, 2, 2048}),
                         [](const testing::TestParamInfo<Machine>& info) {
                           return std::to_string(info.param.workers) + "cpu_" +
                                  std::to_string(info.param.devices) + "emulated";
                         });

// Doubles summed in any order agree with the sequential sum to rounding.
TEST(Reductions, DoubleSumsAgreeToRounding) {
  for (const Machine machine : {Machine{4, 0, 0}, Machine{2, 1, 1 << 20}}) {
    std::vector<double> data(width, 0.0);
    std::vector<double> expected(width, 0.0);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    {
      versa::Runtime rt{config_of(machine)};
      auto h = rt.data(data, "sum");
      // Bound through the task type this time.
      auto add = versa::task_type("add")
                     .cpu([](Span<double> v) {
                       for (std::size_t k = 0; k < v.size(); ++k)
                         v[k] += 1.0 / static_cast<double>(k + 3);
                     })
                     .reduction(versa::sum<double>());
      for (int i = 0; i < 100; ++i) rt.submit(add, versa::add(h));
      for (std::size_t k = 0; k < width; ++k) expected[k] += 100.0 / static_cast<double>(k + 3);
      for (int i = 0; i < 2000; ++i) {
        const double c = value(rng);
        rt.submit(
            "add",
            [c](Span<double> v) {
              for (std::size_t k = 0; k < v.size(); ++k) v[k] += c * static_cast<double>(k + 1);
            },
            versa::placement(machine.devices ? Placement::automatic : Placement::cpu_only),
            versa::add(h), versa::name("add " + std::to_string(i)));
        for (std::size_t k = 0; k < width; ++k) expected[k] += c * static_cast<double>(k + 1);
        if (i == 0) h.set_reduction(versa::sum<double>());  // rebinding the same one is allowed
      }
      rt.wait_all();
    }
    for (std::size_t k = 0; k < width; ++k)
      EXPECT_NEAR(data[k], expected[k], 1e-12 * (1 + std::abs(expected[k]))) << "element " << k;
  }
}

// With two workers and slow adds into one handle, the adds overlap: renaming took away the
// exclusion that `commute` has.
TEST(Reductions, AddsToOneHandleRunInParallel) {
  versa::Runtime rt{versa::testing::workers(2)};
  long total = 0;
  auto h = rt.data(total, "total");
  h.set_reduction(versa::sum<long>());
  std::atomic<int> inside{0}, most{0};
  for (int i = 0; i < 20; ++i)
    rt.submit(
        "add",
        [&](Span<long> v) {
          const int now = ++inside;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          v[0] += 1;
          std::this_thread::sleep_for(2ms);
          --inside;
        },
        versa::add(h));
  rt.wait_all();
  EXPECT_EQ(total, 20);
  EXPECT_EQ(most.load(), 2);
}

// Renamed adds on CPU workers add into the partials that earlier adds of the run put back: a run
// writes the identity into at most one partial per worker and merges at most that many.
TEST(Reductions, HostPartialsAreReusedAcrossTheRun) {
  const int worker_count = 4, rounds = 3, adds = 200;
  versa::Runtime rt{versa::testing::workers(worker_count)};
  std::vector<long> data(width, 0);
  std::atomic<int> identities{0}, merges{0}, applies{0};
  const auto counted_sum = versa::Reduction<long>("counted sum")
                               .identity([&](Span<long> p) {
                                 ++identities;
                                 for (long& e : p) e = 0;
                               })
                               .merge([&](Span<long> a, Span<const long> b) {
                                 ++merges;
                                 for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
                               })
                               .apply([&](Span<long> a, Span<const long> b) {
                                 ++applies;
                                 for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
                               });
  auto h = rt.data(data, "data");
  h.set_reduction(counted_sum);
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < adds; ++i)
      rt.submit(
          "add",
          [](Span<long> v) {
            for (long& e : v) e += 1;
            std::this_thread::sleep_for(100us);
          },
          versa::add(h));
    rt.wait_all();
  }
  for (long e : data) EXPECT_EQ(e, rounds * adds);
  EXPECT_GT(identities.load(), 0) << "no add was renamed";
  EXPECT_LE(identities.load(), rounds * worker_count);
  EXPECT_LE(merges.load(), rounds * (worker_count - 1));
  EXPECT_GT(applies.load(), 0);  // applied column by column: once per round with one column
  EXPECT_LE(applies.load(), rounds);
  EXPECT_EQ(rt.reduction_memory_bytes(), 0u);
}

// Reads between runs of adds see every earlier add, from the main program too; acquire() in
// add mode adds directly into the data.
TEST(Reductions, ReadersAndAcquireSeeCompletedSums) {
  versa::Runtime rt{versa::testing::workers(2)};
  std::vector<int> data(8, 0);
  auto h = rt.data(data, "counts");
  h.set_reduction(versa::sum<int>());
  auto one = [](Span<int> v) {
    for (int& e : v) e += 1;
  };
  for (int i = 0; i < 50; ++i) rt.submit("add", one, versa::add(h));
  {
    auto view = rt.acquire(versa::read(h));
    for (int e : view.view()) EXPECT_EQ(e, 50);
  }
  for (int i = 0; i < 50; ++i) rt.submit("add", one, versa::add(h));
  {
    auto view = rt.acquire(versa::add(h));
    for (int& e : view.view()) e += 1000;
  }
  for (int i = 0; i < 50; ++i) rt.submit("add", one, versa::add(h));
  rt.wait_all();
  for (int e : data) EXPECT_EQ(e, 1150);
  EXPECT_EQ(rt.reduction_memory_bytes(), 0u);
}

// A tile inside a larger matrix: partials are dense, and the apply writes only the tile.
TEST(Reductions, TilesWithALeadingDimensionReceiveTheirSums) {
  versa::Runtime rt{versa::testing::workers(4)};
  std::vector<double> matrix(6 * 4, -1.0);  // 6 x 4, column-major; the tile is rows 1..3
  for (std::size_t j = 0; j < 4; ++j)
    for (std::size_t i = 1; i < 4; ++i) matrix[i + 6 * j] = 0.0;
  auto tile = rt.tile(matrix.data() + 1, 3, 4, 6, "tile");
  tile.set_reduction(versa::sum<double>());
  for (int t = 0; t < 40; ++t)
    rt.submit(
        "add",
        [](versa::Tile<double> x) {
          for (std::size_t j = 0; j < x.cols(); ++j)
            for (std::size_t i = 0; i < x.rows(); ++i) x(i, j) += static_cast<double>(i + 10 * j);
        },
        versa::add(tile));
  rt.wait_all();
  for (std::size_t j = 0; j < 4; ++j)
    for (std::size_t i = 0; i < 6; ++i) {
      const double expected =
          (i >= 1 && i <= 3) ? 40.0 * static_cast<double>(i - 1 + 10 * j) : -1.0;
      EXPECT_EQ(matrix[i + 6 * j], expected) << "(" << i << ", " << j << ")";
    }
}

// The budget bounds the partials alive at once; at 0 every add runs in place, one at a time.
TEST(Reductions, TheBudgetBoundsPartialMemory) {
  for (const std::size_t budget : {std::size_t{0}, 2 * width * sizeof(long)}) {
    versa::Config config = versa::testing::workers(4);
    config.reduction_memory_limit = budget;
    versa::Runtime rt{config};
    std::vector<long> data(width, 0);
    auto h = rt.data(data, "data");
    h.set_reduction(versa::sum<long>());
    std::atomic<std::size_t> most{0};
    for (int i = 0; i < 400; ++i)
      rt.submit(
          "add",
          [&rt, &most](Span<long> v) {
            for (long& e : v) e += 1;
            const std::size_t held = rt.reduction_memory_bytes();
            std::size_t seen = most.load();
            while (held > seen && !most.compare_exchange_weak(seen, held)) {
            }
          },
          versa::add(h));
    rt.wait_all();
    for (long e : data) EXPECT_EQ(e, 400);
    EXPECT_LE(most.load(), budget) << "budget " << budget;
    EXPECT_EQ(rt.reduction_memory_bytes(), 0u);
  }
}

// Partials left when a handle is destroyed are applied to its memory first.
TEST(Reductions, DestroyingAHandleAppliesItsPartials) {
  versa::Runtime rt{versa::testing::workers(2)};
  std::vector<long> data(width, 0);
  {
    auto h = rt.data(data, "data");
    h.set_reduction(versa::sum<long>());
    for (int i = 0; i < 100; ++i)
      rt.spawn(
          "add",
          [](Span<long> v) {
            for (long& e : v) e += 2;
          },
          versa::add(h));
    rt.sync();  // the adds are done; their partials are not applied yet
  }
  for (long e : data) EXPECT_EQ(e, 200);
  rt.wait_all();
}

TEST(Reductions, CudaFunctionsAreKeptOnlyWithTheCudaBackend) {
  EXPECT_EQ(versa::sum<double>().ops()->runs_on_cuda(), bool{VERSA_HAVE_CUDA});
  const auto op = versa::Reduction<int>("ones")
                      .identity([](Span<int> p) { std::fill(p.begin(), p.end(), 1); })
                      .cuda_identity([](versa::CudaContext&, Span<int>) {});
  EXPECT_EQ(static_cast<bool>(op.ops()->cuda_identity), bool{VERSA_HAVE_CUDA});
  EXPECT_TRUE(op.ops()->identity);
}

TEST(Reductions, OperatorMistakesAreRefusedAtSubmit) {
  versa::Runtime rt{versa::testing::workers(2)};
  std::vector<double> x(4, 0.0);
  std::vector<int> n(4, 0);
  auto hx = rt.data(x, "x");
  auto hn = rt.data(n, "n");
  auto message = [](auto&& submit) {
    try {
      submit();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // No operator anywhere.
  std::string m = message([&] {
    rt.submit(
        "acc", [](Span<double>) {}, versa::add(hx));
  });
  EXPECT_NE(m.find("'x'"), std::string::npos) << m;
  EXPECT_NE(m.find("no reduction operator"), std::string::npos) << m;
  // An operator for other elements.
  auto wrong = versa::task_type("wrong").cpu([](Span<int>) {}).reduction(versa::sum<double>());
  m = message([&] { rt.submit(wrong, versa::add(hn)); });
  EXPECT_NE(m.find("'wrong'"), std::string::npos) << m;
  EXPECT_NE(m.find("elements are int,"), std::string::npos) << m;
  EXPECT_NE(m.find("elements of double"), std::string::npos) << m;
  // Two operators for one handle.
  auto maximum = versa::Reduction<double>("max")
                     .identity([](Span<double> p) {
                       for (double& e : p) e = -1e300;
                     })
                     .merge([](Span<double> a, Span<const double> b) {
                       for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]);
                     });
  hx.set_reduction(versa::sum<double>());
  auto max_type = versa::task_type("max").cpu([](Span<double>) {}).reduction(maximum);
  m = message([&] { rt.submit(max_type, versa::add(hx)); });
  EXPECT_NE(m.find("'max'"), std::string::npos) << m;
  EXPECT_NE(m.find("'sum'"), std::string::npos) << m;
  // Changing the operator while adds are open: the add is held in its body until the change
  // was tried (an add that had finished in place would leave no run open, and the change would
  // rightly be accepted).
  std::atomic<bool> adding{true};
  rt.submit(
      "add",
      [&adding](Span<double> v) {
        while (adding.load(std::memory_order_acquire)) std::this_thread::yield();
        v[0] += 1;
      },
      versa::add(hx));
  m = message([&] { hx.set_reduction(maximum); });
  adding.store(false, std::memory_order_release);
  EXPECT_NE(m.find("still open"), std::string::npos) << m;
  rt.wait_all();
  EXPECT_EQ(x[0], 1.0);
  // Nothing was lost: the refused tasks never ran, the handles still work.
  hx.set_reduction(maximum);
  for (double v : {3.0, 7.0, 5.0})
    rt.submit(
        "max", [v](Span<double> p) { p[1] = std::max(p[1], v); }, versa::add(hx));
  rt.wait_all();
  EXPECT_EQ(x[1], 7.0);
}

// An operator for elements of the same size but another type (an int64_t summed as double) is
// refused, naming the task, the handle and both types: summed as doubles, 8 adds of 2^58 into 5
// would round to 2017612633061982208. The right operator then gives the exact sum.
TEST(Reductions, AnOperatorOfAnotherElementTypeIsRefused) {
  versa::Runtime rt{versa::testing::workers(2)};
  std::int64_t total = 5;
  auto h = rt.data(total, "total");
  const auto add_big = [](Span<std::int64_t> v) { v[0] += std::int64_t{1} << 58; };
  auto as_double = versa::task_type("big add").cpu(add_big).reduction(versa::sum<double>());
  try {
    rt.submit(as_double, versa::add(h));
    FAIL() << "an operator on double was accepted for int64_t elements";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'big add'"), std::string::npos) << m;
    EXPECT_NE(m.find("'total'"), std::string::npos) << m;
    EXPECT_NE(m.find(versa::detail::type_name(typeid(std::int64_t))), std::string::npos) << m;
    EXPECT_NE(m.find("elements of double"), std::string::npos) << m;
  }
  auto exact = versa::task_type("big add").cpu(add_big).reduction(versa::sum<std::int64_t>());
  for (int i = 0; i < 8; ++i) rt.submit(exact, versa::add(h));
  rt.wait_all();
  EXPECT_EQ(total, std::int64_t{2305843009213693957});
}

// A failing add leaves the sum unusable: later readers are cancelled, wait_all reports it, and
// the partials are still returned.
TEST(Reductions, AFailingAddCancelsTheReaders) {
  versa::Runtime rt{versa::testing::workers(2)};
  std::vector<long> data(width, 0);
  auto h = rt.data(data, "data");
  h.set_reduction(versa::sum<long>());
  for (int i = 0; i < 30; ++i)
    rt.submit(
        "add",
        [i](Span<long> v) {
          if (i == 17) throw std::runtime_error("contribution 17 is bad");
          v[0] += 1;
        },
        versa::add(h));
  bool read_ran = false;
  rt.submit(
      "read", [&](Span<const long>) { read_ran = true; }, versa::read(h));
  try {
    rt.wait_all();
    ADD_FAILURE() << "wait_all did not report the failure";
  } catch (const versa::TaskFailure& failure) {
    EXPECT_NE(std::string(failure.what()).find("contribution 17"), std::string::npos);
  }
  EXPECT_FALSE(read_ran);
  EXPECT_EQ(rt.reduction_memory_bytes(), 0u);
}

// The operator of a closed run is still in use until its flush has run: set_reduction is
// refused until then (a max applied to partial sums would give 1 here, not 2).
TEST(Reductions, TheOperatorOfAClosedRunCannotChangeBeforeItsFlush) {
  versa::Runtime rt{versa::testing::workers(2)};
  long x = 0;
  auto h = rt.data(x, "x");
  h.set_reduction(versa::sum<long>());
  std::atomic<bool> adding{true};
  rt.submit(
      "held add",
      [&adding](Span<long> v) {
        while (adding.load(std::memory_order_acquire)) std::this_thread::yield();
        v[0] += 1;
      },
      versa::add(h));
  rt.submit(
      "add", [](Span<long> v) { v[0] += 1; }, versa::add(h));
  long seen = 0;
  rt.submit(
      "read", [&seen](Span<const long> v) { seen = v[0]; }, versa::read(h));  // closes the run
  const auto maximum =
      versa::Reduction<long>("max")
          .identity([](Span<long> p) { p[0] = 0; })
          .merge([](Span<long> a, Span<const long> b) { a[0] = std::max(a[0], b[0]); });
  const std::string m =
      versa::testing::message_of<std::logic_error>([&] { h.set_reduction(maximum); });
  adding.store(false, std::memory_order_release);
  EXPECT_NE(m.find("still to be applied"), std::string::npos) << m;
  rt.wait_all();
  EXPECT_EQ(seen, 2);
  EXPECT_NO_THROW(h.set_reduction(maximum));  // nothing pending any more
}

// What a user's operator throws fails the add (identity) or the flush (merge), reported by
// wait_all, and every partial buffer still goes back.
TEST(Reductions, AnOperatorThatThrowsFailsItsTaskAndGivesThePartialsBack) {
  for (const bool in_identity : {true, false}) {
    SCOPED_TRACE(in_identity ? "identity" : "merge");
    versa::Runtime rt{versa::testing::workers(3)};
    long x = 0;
    auto h = rt.data(x, "x");
    const auto faulty = versa::Reduction<long>("faulty")
                            .identity([in_identity](Span<long> p) {
                              if (in_identity) throw std::runtime_error("no identity");
                              p[0] = 0;
                            })
                            .merge([in_identity](Span<long> a, Span<const long> b) {
                              if (!in_identity) throw std::runtime_error("no merge");
                              a[0] += b[0];
                            });
    h.set_reduction(faulty);
    // Three adds at once: one in place, two renamed into partials.
    std::atomic<int> arrived{0};
    for (int i = 0; i < 3; ++i)
      rt.submit(
          "add",
          [&arrived](Span<long> v) {
            ++arrived;
            versa::testing::eventually([&] { return arrived.load() == 3; },
                                       std::chrono::milliseconds(500));
            v[0] += 1;
          },
          versa::add(h));
    try {
      rt.wait_all();
      ADD_FAILURE() << "the operator's exception was not reported";
    } catch (const versa::TaskFailure& failure) {
      EXPECT_NE(std::string(failure.what()).find(in_identity ? "no identity" : "no merge"),
                std::string::npos)
          << failure.what();
    }
    EXPECT_EQ(rt.reduction_memory_bytes(), 0u);
  }
}

// A flush on the host whose copy home fails (the data on the device, the partials on the host)
// gives its partials back: none is left to the handle's next run, whose sum is then exact.
TEST(Reductions, AFlushThatCannotBringTheDataHomeGivesItsPartialsBack) {
  versa::Config config = versa::testing::with_emulated(versa::testing::workers(2), 1, 1 << 20);
  config.emulated_devices[0].fail_copy_at = 2;  // the copy in succeeds, the copy home fails
  versa::Runtime rt{config};
  std::vector<long> data(width, 0);
  auto h = rt.data(data, "data");
  h.set_reduction(versa::sum<long>());
  rt.submit(
      "on the device", [](Span<long> v) { v[0] = 5; }, versa::placement(Placement::gpu_only),
      versa::write(h));
  for (int i = 0; i < 4; ++i)
    rt.submit(
        "add", [](Span<long> v) { v[0] += 1; }, versa::placement(Placement::cpu_only),
        versa::add(h));
  EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  EXPECT_EQ(rt.reduction_memory_bytes(), 0u);
  rt.submit(
      "reset",
      [](Span<long> v) {
        for (long& e : v) e = 0;
      },
      versa::placement(Placement::cpu_only), versa::write_only(h));
  rt.submit(
      "add one", [](Span<long> v) { v[0] += 1; }, versa::placement(Placement::cpu_only),
      versa::add(h));
  rt.wait_all();
  EXPECT_EQ(data[0], 1);
  EXPECT_EQ(rt.reduction_memory_bytes(), 0u);
}

// A task whose closure holds a handle's last Handle destroys it as the task finishes; with
// partial sums still to apply, the handle's destruction submits their flush and waits for it,
// on the worker that is finishing the task: the flush must not be left as that worker's next
// task (its continuation), which it would never run while it waits.
TEST(Reductions, AHandleDestroyedAsATaskFinishesAppliesItsPartials) {
  versa::Runtime rt{versa::testing::workers(1)};
  long sum = 0;
  long token_data = 0;
  auto h = std::make_unique<versa::Handle<long>>(rt.data(sum, "sum"));
  h->set_reduction(versa::sum<long>());
  auto t = rt.data(token_data, "t");
  versa::testing::Gate gate;
  rt.submit(
      "held add",
      [&gate](Span<long> v, Span<const long>) {
        gate.pass();
        v[0] += 1;
      },
      versa::add(*h), versa::read(t));
  rt.submit(
      "add", [](Span<long> v, Span<const long>) { v[0] += 1; }, versa::add(*h), versa::read(t));
  rt.submit(
      "owner", [owned = std::shared_ptr<versa::Handle<long>>(std::move(h))](Span<long>) {},
      versa::write(t));
  ASSERT_TRUE(versa::testing::eventually(gate.reached));
  gate.open = true;
  rt.wait_all();
  EXPECT_EQ(sum, 2);
}

// On an emulated device, adds that cannot have the data write into device partials, merged
// there and brought home once per flush.
TEST(Reductions, DevicePartialsAreMergedOnTheDeviceAndReturned) {
  versa::Runtime rt{versa::testing::with_emulated(versa::testing::workers(1), 1, 1 << 20)};
  std::vector<long> data(width, 0);
  auto h = rt.data(data, "data");
  h.set_reduction(versa::sum<long>());
  for (int step = 0; step < 5; ++step) {
    for (int i = 0; i < 40; ++i)
      rt.submit(
          "add",
          [](Span<long> v) {
            for (std::size_t k = 0; k < v.size(); ++k) v[k] += static_cast<long>(k);
          },
          versa::placement(Placement::gpu_only), versa::add(h));
    rt.submit(
        "scale",
        [](Span<long> v) {
          for (long& e : v) e *= 2;
        },
        versa::placement(Placement::gpu_only), versa::write(h));
  }
  rt.wait_all();
  for (std::size_t k = 0; k < width; ++k) {
    long expected = 0;
    for (int step = 0; step < 5; ++step) expected = (expected + 40 * static_cast<long>(k)) * 2;
    ASSERT_EQ(data[k], expected) << "element " << k;
  }
  EXPECT_EQ(rt.reduction_memory_bytes(), 0u);
  EXPECT_EQ(rt.statistics()[1].tasks, 5u * 41u);
}

// When a device holds the data and every partial, the partials are applied there: nothing
// moves between host and device for the adds.
TEST(Reductions, PartialsOnTheDeviceThatHoldsTheDataAreAppliedThere) {
  versa::Runtime rt{versa::testing::with_emulated(versa::testing::workers(1), 1, 1 << 20)};
  std::vector<long> data(width, 1);
  auto h = rt.data(data, "data");
  h.set_reduction(versa::sum<long>());
  const auto on_device = versa::placement(Placement::gpu_only);
  auto scale = [](Span<long> v) {
    for (long& e : v) e *= 2;
  };
  rt.spawn("scale", scale, on_device, versa::write(h));  // the data now lives on the device
  long expected = 2;
  for (int step = 0; step < 3; ++step) {
    for (int i = 0; i < 30; ++i)
      rt.spawn(
          "add",
          [](Span<long> v) {
            for (long& e : v) e += 1;
          },
          on_device, versa::add(h));
    rt.spawn("scale", scale, on_device, versa::write(h));
    expected = (expected + 30) * 2;
  }
  rt.sync();
  const auto stats = rt.statistics();
  EXPECT_EQ(stats[1].bytes_to_device, width * sizeof(long)) << "only the first copy in";
  EXPECT_EQ(stats[1].bytes_to_host, 0u) << "the data or a partial came home before wait_all";
  rt.wait_all();
  for (long e : data) EXPECT_EQ(e, expected);
  EXPECT_EQ(rt.reduction_memory_bytes(), 0u);
}

}  // namespace
