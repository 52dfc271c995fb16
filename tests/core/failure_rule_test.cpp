// The failure rule (include/versa/access_mode.hpp, reads_contents): a task is cancelled if and
// only if it reads data a failure spoilt — a read or write of a failed handle, or a commute of a
// handle that failed before its run of commutes began; adds and write_onlys read nothing. A
// failed or cancelled task spoils what it modifies (for adds and commutes: what the run leaves),
// and a write_only that runs makes its handle valid again. The outcome must not depend on timing,
// so each case runs on 1-8 workers, with and without emulated devices that may take the tasks.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <tuple>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using versa::Span;

struct Machine {
  int workers;
  int devices;
};

class FailureRule : public testing::TestWithParam<Machine> {
 protected:
  versa::Config config() const {
    return versa::testing::with_emulated(versa::testing::workers(GetParam().workers),
                                         GetParam().devices);
  }
  // Tasks may run on any device present.
  static versa::TaskPlacement anywhere() { return versa::placement(versa::Placement::automatic); }
};

// Whether reading `h` reports a failure.
template <class T>
bool failed(versa::Runtime& rt, const versa::Handle<T>& h) {
  try {
    (void)rt.acquire(versa::read(h));
  } catch (const versa::TaskFailure&) {
    return true;
  }
  return false;
}

// The program of the rule's statement: "earlier" reads nothing the failed task should have
// produced and shares only a run of adds on `a` with "later", whose add into the failed `c`
// reads nothing either: both run.
TEST_P(FailureRule, AddSiblingsOfACancelledOrFailedTaskRun) {
  long a = 1, b = 1, c = 1;
  versa::Runtime rt{config()};
  auto ha = rt.data(a, "a"), hb = rt.data(b, "b"), hc = rt.data(c, "c");
  ha.set_reduction(versa::sum<long>());
  hc.set_reduction(versa::sum<long>());
  rt.submit(
      "fails", [](Span<long>) { throw std::runtime_error("boom"); }, versa::write(hc), anywhere());
  rt.submit(
      "earlier",
      [](Span<long> x, Span<long> y) {
        x[0] += 10;
        y[0] += 1;
      },
      versa::commute(hb), versa::add(ha), anywhere());
  rt.submit(
      "later",
      [](Span<long> y, Span<long> z) {
        y[0] += 1;
        z[0] += 1;
      },
      versa::add(hc), versa::add(ha), anywhere());
  try {
    rt.wait_all();
    ADD_FAILURE() << "the failure was not reported";
  } catch (const versa::TaskFailure& failure) {
    EXPECT_EQ(failure.task_name(), "fails");
    EXPECT_EQ(failure.cancelled_tasks(), 0u);
  }
  EXPECT_FALSE(failed(rt, ha));
  EXPECT_FALSE(failed(rt, hb));
  EXPECT_TRUE(failed(rt, hc));
  EXPECT_EQ(a, 3);
  EXPECT_EQ(b, 11);
}

// A commute that fails spoils the value its run leaves, not what the other commutes of the run
// read: they run, and their other outputs are valid. A commute run that begins on failed data
// is cancelled whole.
TEST_P(FailureRule, CommuteRunSeesTheValueFromBeforeTheRun) {
  int shared = 0, first = 0, second = 0, after = 0;
  versa::Runtime rt{config()};
  auto hs = rt.data(shared, "shared"), h1 = rt.data(first, "first"), h2 = rt.data(second, "second"),
       ha = rt.data(after, "after");
  rt.submit(
      "commute 1", [](Span<int> s, Span<int> o) { ++s[0], o[0] = 1; }, versa::commute(hs),
      versa::write(h1), anywhere());
  rt.submit(
      "commute fails", [](Span<int>) { throw std::runtime_error("boom"); }, versa::commute(hs),
      anywhere());
  rt.submit(
      "commute 2", [](Span<int> s, Span<int> o) { ++s[0], o[0] = 2; }, versa::commute(hs),
      versa::write(h2), anywhere());
  // A reader after the run: cancelled, and it spoils its own output.
  rt.submit(
      "after the run", [](Span<const int>, Span<int> o) { o[0] = 3; }, versa::read(hs),
      versa::write(ha), anywhere());
  // A new run of commutes on the failed handle: cancelled, though `h1` is valid.
  rt.submit(
      "next run", [](Span<int> s, Span<int> o) { ++s[0], o[0] = 4; }, versa::commute(hs),
      versa::write(h1), anywhere());
  try {
    rt.wait_all();
    ADD_FAILURE() << "the failure was not reported";
  } catch (const versa::TaskFailure& failure) {
    EXPECT_EQ(failure.task_name(), "commute fails");
    EXPECT_EQ(failure.cancelled_tasks(), 2u);
  }
  EXPECT_TRUE(failed(rt, hs));
  EXPECT_TRUE(failed(rt, ha));
  EXPECT_TRUE(failed(rt, h1));  // spoilt by the cancelled "next run"
  EXPECT_FALSE(failed(rt, h2));
  EXPECT_EQ(second, 2);
  EXPECT_EQ(after, 0);
}

// A failed add spoils the reduction's result; the flush discards the partials, the readers are
// cancelled, and a write_only that runs afterwards makes the handle valid again.
TEST_P(FailureRule, FailedAddSpoilsTheResultUntilAWriteOnly) {
  long sum = 0;
  int seen = -1;
  versa::Runtime rt{config()};
  auto hs = rt.data(sum, "sum");
  auto hseen = rt.data(seen, "seen");
  hs.set_reduction(versa::sum<long>());
  for (int i = 0; i < 20; ++i) {
    if (i == 7) {
      rt.submit(
          "add fails", [](Span<long>) { throw std::runtime_error("boom"); }, versa::add(hs),
          anywhere());
    } else {
      rt.submit(
          "add", [](Span<long> s) { s[0] += 1; }, versa::add(hs), anywhere());
    }
  }
  rt.submit(
      "reader", [](Span<const long> s, Span<int> o) { o[0] = static_cast<int>(s[0]); },
      versa::read(hs), versa::write(hseen), anywhere());
  rt.submit(
      "reset", [](Span<long> s) { s[0] = 100; }, versa::write_only(hs), anywhere());
  rt.submit(
      "add after", [](Span<long> s) { s[0] += 1; }, versa::add(hs), anywhere());
  EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  EXPECT_TRUE(failed(rt, hseen));
  EXPECT_FALSE(failed(rt, hs));
  EXPECT_EQ(sum, 101);
}

INSTANTIATE_TEST_SUITE_P(Machines, FailureRule,
                         testing::Values(Machine{1, 0}, Machine{2, 0}, Machine{4, 0}, Machine{8, 0},
                                         Machine{1, 1}, Machine{2, 1}, Machine{2, 2},
                                         Machine{4, 2}),
                         [](const testing::TestParamInfo<Machine>& info) {
                           return std::to_string(info.param.workers) + "cpu_" +
                                  std::to_string(info.param.devices) + "dev";
                         });

}  // namespace
