// The MSI coherence protocol of replicas (DESIGN section 4): the transition table, one handle's
// replicas moving between host and devices, and the choice of the replica to copy from.
#include "data/coherence.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/assert.hpp"
#include "base/mutex.hpp"
#include "data/replica.hpp"

namespace versa::detail {
namespace {

constexpr ReplicaState I = ReplicaState::invalid;
constexpr ReplicaState S = ReplicaState::shared;
constexpr ReplicaState O = ReplicaState::owned;
using E = CoherenceEvent;

// The transition is constexpr so that the runtime can fold it; an allowed one must stay usable
// in constant expressions (the assert only fires on forbidden ones).
static_assert(transition(I, E::read_here) == S);
static_assert(transition(O, E::read_elsewhere) == S);

struct AllowedTransition {
  CoherenceEvent event;
  ReplicaState from;
  ReplicaState to;
};

// Written from the MSI semantics in coherence.hpp, not copied from its table, so that a typo in
// the table shows up here.
const std::vector<AllowedTransition> allowed_transitions = {
    // A read here makes a copy valid; an owner stays the only (modified) copy.
    {E::read_here, I, S},
    {E::read_here, S, S},
    {E::read_here, O, O},
    // A write here needs valid data, and leaves this replica the only modified copy.
    {E::write_here, S, O},
    {E::write_here, O, O},
    // An overwrite needs nothing of the old data.
    {E::overwrite_here, I, O},
    {E::overwrite_here, S, O},
    {E::overwrite_here, O, O},
    // Another node's copy demotes an owner to one of several valid copies.
    {E::read_elsewhere, I, I},
    {E::read_elsewhere, S, S},
    {E::read_elsewhere, O, S},
    // Another node's write invalidates every other copy.
    {E::write_elsewhere, I, I},
    {E::write_elsewhere, S, I},
    {E::write_elsewhere, O, I},
    // Only a shared copy (never the last valid one, never an owner) may be dropped.
    {E::evict, S, I},
};

class CoherenceTransitionTest : public ::testing::TestWithParam<AllowedTransition> {};

TEST_P(CoherenceTransitionTest, GivesTheDocumentedState) {
  const AllowedTransition& t = GetParam();
  EXPECT_EQ(transition(t.from, t.event), t.to)
      << to_string(t.event) << " from " << to_string(t.from) << " gave "
      << to_string(transition(t.from, t.event)) << ", expected " << to_string(t.to);
}

INSTANTIATE_TEST_SUITE_P(Coherence, CoherenceTransitionTest,
                         ::testing::ValuesIn(allowed_transitions),
                         [](const ::testing::TestParamInfo<AllowedTransition>& info) {
                           return std::string(to_string(info.param.event)) + "_from_" +
                                  to_string(info.param.from);
                         });

// Every cell of the table is either one of the allowed transitions above or forbidden, and the
// forbidden ones are exactly the three the header names.
TEST(CoherenceTable, ForbidsExactlyTheDocumentedTransitions) {
  int allowed = 0;
  std::vector<std::string> forbidden;
  for (int event = 0; event < 6; ++event) {
    for (int state = 0; state < 3; ++state) {
      const ReplicaState next = coherence_table::next[event][state];
      if (next == coherence_table::X) {
        forbidden.push_back(std::string(to_string(static_cast<CoherenceEvent>(event))) + "/" +
                            to_string(static_cast<ReplicaState>(state)));
      } else {
        ++allowed;
      }
    }
  }
  EXPECT_EQ(allowed, static_cast<int>(allowed_transitions.size()));
  EXPECT_EQ(forbidden,
            (std::vector<std::string>{"write_here/invalid", "evict/invalid", "evict/owned"}));
}

TEST(CoherenceTable, OnlyInvalidIsNotValid) {
  EXPECT_FALSE(is_valid(I));
  EXPECT_TRUE(is_valid(S));
  EXPECT_TRUE(is_valid(O));
}

// Forbidden transitions are bugs in the runtime: builds with invariant checks (Debug, or
// VERSA_ASSERTS=ON as in the ThreadSanitizer job) stop at once. The threadsafe style re-executes
// the binary for the child, so the check does not depend on other tests' threads.
TEST(CoherenceDeathTest, ForbiddenTransitionsAbortWhenChecksAreOn) {
#if VERSA_ASSERTS_ON
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(transition(I, E::write_here), "forbidden replica transition");
  EXPECT_DEATH(transition(I, E::evict), "forbidden replica transition");
  EXPECT_DEATH(transition(O, E::evict), "forbidden replica transition");
#else
  GTEST_SKIP() << "invariant checks are off in this build (VERSA_ASSERTS=OFF, NDEBUG)";
#endif
}

TEST(CoherenceDeathTest, EvictingTheLastValidReplicaAbortsWhenChecksAreOn) {
#if VERSA_ASSERTS_ON
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  int host_data = 0;
  ReplicaSet replicas(nullptr, &host_data, 2);
  MutexLock guard(replicas.mutex());
  replicas.apply(1, E::read_here, E::read_elsewhere);  // host and device shared
  replicas.apply_one(1, E::evict);                     // host shared alone
  EXPECT_DEATH(replicas.apply_one(0, E::evict), "last valid replica");
#else
  GTEST_SKIP() << "invariant checks are off in this build (VERSA_ASSERTS=OFF, NDEBUG)";
#endif
}

// --- ReplicaSet ---

constexpr int host = 0;
constexpr int device_a = 1;
constexpr int device_b = 2;

std::vector<ReplicaState> states(ReplicaSet& replicas) {
  std::vector<ReplicaState> result;
  for (int n = 0; n < replicas.nodes(); ++n) result.push_back(replicas.at(n).state);
  return result;
}

// The protocol's invariant, checked independently of ReplicaSet's own debug check (which is
// compiled out of release builds).
void expect_invariant(ReplicaSet& replicas) {
  int valid = 0;
  int owned = 0;
  for (ReplicaState state : states(replicas)) {
    valid += is_valid(state);
    owned += state == O;
  }
  EXPECT_GE(valid, 1) << "no valid replica left";
  EXPECT_LE(owned, 1) << "two owners";
  if (owned == 1) {
    EXPECT_EQ(valid, 1) << "an owner beside other valid copies";
  }
}

TEST(CoherenceReplicaSet, StartsWithTheHostOwningTheData) {
  int host_data = 0;
  ReplicaSet replicas(nullptr, &host_data, 3);
  EXPECT_EQ(replicas.nodes(), 3);
  EXPECT_EQ(states(replicas), (std::vector<ReplicaState>{O, I, I}));
  EXPECT_EQ(replicas.at(host).data, &host_data);
  for (int n = 0; n < 3; ++n) {
    EXPECT_EQ(replicas.at(n).node, n);
    EXPECT_EQ(replicas.at(n).data == nullptr, n != host);
  }
}

TEST(CoherenceReplicaSet, HostAndDeviceAccessesKeepTheInvariant) {
  int host_data = 0;
  ReplicaSet replicas(nullptr, &host_data, 3);
  MutexLock guard(replicas.mutex());

  replicas.apply(host, E::write_here, E::write_elsewhere);
  EXPECT_EQ(states(replicas), (std::vector<ReplicaState>{O, I, I}));
  expect_invariant(replicas);

  // A device read copies the data over: both copies are now valid, neither is owned.
  replicas.apply(device_a, E::read_here, E::read_elsewhere);
  EXPECT_EQ(states(replicas), (std::vector<ReplicaState>{S, S, I}));
  expect_invariant(replicas);

  replicas.apply(device_b, E::read_here, E::read_elsewhere);
  EXPECT_EQ(states(replicas), (std::vector<ReplicaState>{S, S, S}));
  expect_invariant(replicas);

  // A device write makes that device the only valid copy.
  replicas.apply(device_a, E::write_here, E::write_elsewhere);
  EXPECT_EQ(states(replicas), (std::vector<ReplicaState>{I, O, I}));
  expect_invariant(replicas);

  // Reading it back on the host demotes the device's copy to shared.
  replicas.apply(host, E::read_here, E::read_elsewhere);
  EXPECT_EQ(states(replicas), (std::vector<ReplicaState>{S, S, I}));
  expect_invariant(replicas);

  // Evicting a shared copy leaves the host's.
  replicas.apply_one(device_a, E::evict);
  EXPECT_EQ(states(replicas), (std::vector<ReplicaState>{S, I, I}));
  expect_invariant(replicas);

  // An overwrite on a device that holds nothing needs no copy and takes ownership.
  replicas.apply(device_b, E::overwrite_here, E::write_elsewhere);
  EXPECT_EQ(states(replicas), (std::vector<ReplicaState>{I, I, O}));
  expect_invariant(replicas);

  // A read on the owning node itself keeps it the owner.
  replicas.apply(device_b, E::read_here, E::read_elsewhere);
  EXPECT_EQ(states(replicas), (std::vector<ReplicaState>{I, I, O}));
  expect_invariant(replicas);
}

TEST(CoherenceReplicaSet, SourceIsNullWhenOnlyTheNodeItselfIsValid) {
  int host_data = 0;
  ReplicaSet replicas(nullptr, &host_data, 3);
  MutexLock guard(replicas.mutex());
  EXPECT_EQ(replicas.source_for(host), nullptr);
  EXPECT_EQ(replicas.source_for(device_a), &replicas.at(host));
}

TEST(CoherenceReplicaSet, SourcePrefersTheOwner) {
  int host_data = 0;
  ReplicaSet replicas(nullptr, &host_data, 3);
  MutexLock guard(replicas.mutex());
  replicas.apply(device_b, E::overwrite_here, E::write_elsewhere);
  EXPECT_EQ(replicas.source_for(host), &replicas.at(device_b));
  EXPECT_EQ(replicas.source_for(device_a), &replicas.at(device_b));
  EXPECT_EQ(replicas.source_for(device_b), nullptr);
}

TEST(CoherenceReplicaSet, SourcePrefersTheHostAmongSharedCopies) {
  int host_data = 0;
  ReplicaSet replicas(nullptr, &host_data, 3);
  MutexLock guard(replicas.mutex());
  replicas.apply(device_a, E::read_here, E::read_elsewhere);
  replicas.apply(device_b, E::read_here, E::read_elsewhere);
  ASSERT_EQ(states(replicas), (std::vector<ReplicaState>{S, S, S}));
  // device_a comes first in node order; the host must still win.
  EXPECT_EQ(replicas.source_for(device_b), &replicas.at(host));
  EXPECT_EQ(replicas.source_for(device_a), &replicas.at(host));
  // Without the host, any other valid copy will do.
  Replica* source = replicas.source_for(host);
  ASSERT_NE(source, nullptr);
  EXPECT_NE(source->node, host);
  EXPECT_TRUE(is_valid(source->state));
}

TEST(CoherenceReplicaSet, SourceSkipsFillingReplicas) {
  int host_data = 0;
  ReplicaSet replicas(nullptr, &host_data, 3);
  MutexLock guard(replicas.mutex());
  // device_a owns the data; device_b starts a copy from it (shared, still filling).
  replicas.apply(device_a, E::overwrite_here, E::write_elsewhere);
  replicas.apply(device_b, E::read_here, E::read_elsewhere);
  replicas.at(device_b).filling = true;
  ASSERT_EQ(states(replicas), (std::vector<ReplicaState>{I, S, S}));

  EXPECT_EQ(replicas.source_for(host), &replicas.at(device_a));
  // A filling host is skipped too, despite the preference for the host.
  replicas.apply(host, E::read_here, E::read_elsewhere);
  replicas.at(host).filling = true;
  EXPECT_EQ(replicas.source_for(device_b), &replicas.at(device_a));
  // With every other valid copy filling there is nothing to copy from yet.
  replicas.at(device_a).filling = true;
  EXPECT_EQ(replicas.source_for(device_b), nullptr);
  replicas.at(device_b).filling = false;
  EXPECT_EQ(replicas.source_for(device_a), &replicas.at(device_b));
}

TEST(CoherenceReplicaSet, FillingReportsAReplicaWithACopyInFlight) {
  int host_data = 0;
  ReplicaSet replicas(nullptr, &host_data, 3);
  MutexLock guard(replicas.mutex());
  EXPECT_EQ(replicas.filling(), nullptr);
  replicas.at(device_b).filling = true;
  EXPECT_EQ(replicas.filling(), &replicas.at(device_b));
  replicas.at(device_b).filling = false;
  EXPECT_EQ(replicas.filling(), nullptr);
}

TEST(CoherenceReplicaSet, OnDevicesIgnoresTheHostBuffer) {
  int host_data = 0;
  int device_buffer = 0;
  ReplicaSet replicas(nullptr, &host_data, 3);
  // on_devices() takes the mutex itself.
  EXPECT_FALSE(replicas.on_devices());
  replicas.at(device_b).data = &device_buffer;
  EXPECT_TRUE(replicas.on_devices());
  replicas.at(device_b).data = nullptr;
  EXPECT_FALSE(replicas.on_devices());
}

}  // namespace
}  // namespace versa::detail
