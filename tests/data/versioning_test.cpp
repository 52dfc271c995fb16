// Required versions and wait lists of a handle (DESIGN.md section 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "data/handle_state.hpp"

namespace versa::detail {
namespace {

// The required version of each access; a flush registered before an access shows as the
// entry `flush` (its own required version is one less than the access's).
constexpr std::uint64_t flush = UINT64_MAX;
std::vector<std::uint64_t> required_versions(const std::vector<AccessMode>& modes) {
  HandleState handle(nullptr, Layout{}, "h", nullptr);
  std::vector<std::uint64_t> versions;
  for (AccessMode mode : modes) {
    const Registration registration = handle.register_access(mode);
    if (registration.flush_on) versions.push_back(flush);
    versions.push_back(registration.required);
  }
  return versions;
}

std::uint64_t register_one(HandleState& handle, AccessMode mode) {
  return handle.register_access(mode).required;
}

using M = AccessMode;

TEST(Versioning, WorkedExampleOfTheVersioningPaper) {
  // The paper's 0, 0, 2, 3, 3, 3, 6, with the flush that applies the adds' partials counted as
  // one more access before the last write.
  EXPECT_EQ(required_versions({M::read, M::read, M::write, M::add, M::add, M::add, M::write}),
            (std::vector<std::uint64_t>{0, 0, 2, 3, 3, 3, flush, 7}));
}

TEST(Versioning, OnlyTheEndOfARunOfAddsRegistersAFlush) {
  EXPECT_EQ(required_versions({M::add, M::add, M::read, M::read, M::add, M::commute}),
            (std::vector<std::uint64_t>{0, 0, flush, 3, 3, 5, flush, 7}));
  HandleState handle(nullptr, Layout{}, "h", nullptr);
  std::uint64_t required = 0;
  EXPECT_FALSE(handle.close_add_run(required));  // no run of adds open
  register_one(handle, M::add);
  register_one(handle, M::add);
  ASSERT_TRUE(handle.close_add_run(required));
  EXPECT_EQ(required, 2u);
  EXPECT_FALSE(handle.close_add_run(required));
  EXPECT_EQ(register_one(handle, M::add), 3u);  // a new run, after the flush
}

TEST(Versioning, RunsOfCompatibleAccessesShareTheirVersion) {
  EXPECT_EQ(required_versions({M::commute, M::commute, M::read, M::read, M::commute}),
            (std::vector<std::uint64_t>{0, 0, 2, 2, 4}));
  // add and commute do not share a run: each excludes the other.
  EXPECT_EQ(required_versions({M::add, M::commute, M::add, M::add}),
            (std::vector<std::uint64_t>{0, flush, 2, 3, 3}));
  // writes never share.
  EXPECT_EQ(required_versions({M::write, M::write_only, M::write, M::read}),
            (std::vector<std::uint64_t>{0, 1, 2, 3}));
}

TEST(Versioning, FinishingAccessesWakesWaitersInVersionOrder) {
  HandleState handle(nullptr, Layout{}, "h", nullptr);
  Waiter a, b, c;
  EXPECT_EQ(register_one(handle, M::write), 0u);
  const std::uint64_t r1 = register_one(handle, M::read);
  const std::uint64_t r2 = register_one(handle, M::read);
  const std::uint64_t w = register_one(handle, M::write);
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
  for (int i = 0; i < 3; ++i) EXPECT_EQ(register_one(handle, M::commute), 0u);
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

// Waiters arriving in any order (a task that parked at another handle first comes late) end in
// the order of a stable sort by version: equal versions first come, first woken, whichever end
// the insertion scanned from.
TEST(WaitList, WaitersArrivingOutOfOrderAreKeptInVersionOrder) {
  std::mt19937 random(7);
  for (const std::uint64_t versions : {3u, 50u, 5000u}) {
    WaitList list;
    std::vector<Waiter> waiters(2000);
    std::vector<Waiter*> expected;
    for (std::size_t i = 0; i < waiters.size(); ++i) {
      // Mostly in increasing order, as submitted; every third one late, from anywhere before.
      const std::uint64_t rising = i * versions / waiters.size();
      waiters[i].wait_version = i % 3 == 2 ? random() % (rising + 1) : rising;
      list.insert(&waiters[i]);
      expected.push_back(&waiters[i]);
    }
    std::stable_sort(expected.begin(), expected.end(), [](const Waiter* a, const Waiter* b) {
      return a->wait_version < b->wait_version;
    });
    for (Waiter* w : expected) ASSERT_EQ(list.pop_ready(UINT64_MAX), w) << versions;
    EXPECT_TRUE(list.empty());
  }
}

}  // namespace
}  // namespace versa::detail
