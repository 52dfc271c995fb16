// Required versions and wait lists of a handle (DESIGN.md section 1).
#include <gtest/gtest.h>

#include <vector>

#include "data/handle_state.hpp"

namespace versa::detail {
namespace {

std::vector<std::uint64_t> required_versions(const std::vector<AccessMode>& modes) {
  HandleState handle(nullptr, Layout{}, "h", nullptr);
  std::vector<std::uint64_t> versions;
  for (AccessMode mode : modes) versions.push_back(handle.register_access(mode));
  return versions;
}

using M = AccessMode;

TEST(Versioning, WorkedExampleOfTheVersioningPaper) {
  EXPECT_EQ(required_versions({M::read, M::read, M::write, M::add, M::add, M::add, M::write}),
            (std::vector<std::uint64_t>{0, 0, 2, 3, 3, 3, 6}));
}

TEST(Versioning, RunsOfCompatibleAccessesShareTheirVersion) {
  EXPECT_EQ(required_versions({M::commute, M::commute, M::read, M::read, M::commute}),
            (std::vector<std::uint64_t>{0, 0, 2, 2, 4}));
  // add and commute do not share a run: each excludes the other.
  EXPECT_EQ(required_versions({M::add, M::commute, M::add, M::add}),
            (std::vector<std::uint64_t>{0, 1, 2, 2}));
  // writes never share.
  EXPECT_EQ(required_versions({M::write, M::write_only, M::write, M::read}),
            (std::vector<std::uint64_t>{0, 1, 2, 3}));
}

TEST(Versioning, FinishingAccessesWakesWaitersInVersionOrder) {
  HandleState handle(nullptr, Layout{}, "h", nullptr);
  Waiter a, b, c;
  EXPECT_EQ(handle.register_access(M::write), 0u);
  const std::uint64_t r1 = handle.register_access(M::read);
  const std::uint64_t r2 = handle.register_access(M::read);
  const std::uint64_t w = handle.register_access(M::write);
  EXPECT_TRUE(handle.has_version(0));
  EXPECT_FALSE(handle.has_version(r1));
  // Park out of order: the list keeps them sorted by version.
  ASSERT_TRUE(handle.park_until(&c, w));
  ASSERT_TRUE(handle.park_until(&a, r1));
  ASSERT_TRUE(handle.park_until(&b, r2));

  std::vector<Waiter*> woken;
  auto record = [&](Waiter* waiter) { woken.push_back(waiter); };
  handle.finish_access(false, record);  // the first write
  EXPECT_EQ(woken, (std::vector<Waiter*>{&a, &b}));
  woken.clear();
  handle.finish_access(false, record);  // one read: the write still waits
  EXPECT_TRUE(woken.empty());
  handle.finish_access(false, record);  // the other read
  EXPECT_EQ(woken, (std::vector<Waiter*>{&c}));
  EXPECT_TRUE(handle.has_version(w));
  EXPECT_FALSE(handle.park_until(&a, w));  // reached: not parked
  EXPECT_EQ(handle.pending_accesses(), 1u);
}

TEST(Versioning, ExclusiveFlagIsHandedOnInArrivalOrder) {
  HandleState handle(nullptr, Layout{}, "h", nullptr);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(handle.register_access(M::commute), 0u);
  Waiter second, third;
  EXPECT_TRUE(handle.take_exclusive_or_park(nullptr));
  EXPECT_FALSE(handle.try_take_exclusive());
  EXPECT_FALSE(handle.take_exclusive_or_park(&second));
  EXPECT_FALSE(handle.take_exclusive_or_park(&third));
  std::vector<Waiter*> woken;
  handle.finish_access(true, [&](Waiter* waiter) { woken.push_back(waiter); });
  EXPECT_EQ(woken, (std::vector<Waiter*>{&second}));
  EXPECT_TRUE(handle.try_take_exclusive());
}

TEST(WaitList, ManyWaitersInSubmissionOrderStayCheapAndOrdered) {
  WaitList list;
  std::vector<Waiter> waiters(10000);
  for (std::size_t i = 0; i < waiters.size(); ++i) {
    waiters[i].wait_version = i / 2;
    list.insert(&waiters[i]);
  }
  for (std::size_t i = 0; i < waiters.size(); ++i) {
    Waiter* w = list.pop_ready(UINT64_MAX);
    ASSERT_EQ(w, &waiters[i]);
  }
  EXPECT_TRUE(list.empty());
}

}  // namespace
}  // namespace versa::detail
