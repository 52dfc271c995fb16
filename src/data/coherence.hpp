// The coherence protocol of replicas (DESIGN section 4): every state change of a replica goes
// through transition(), which reads one table. MSI, as in StarPU: a replica is invalid, shared
// (a valid copy; others may exist) or owned (the only valid copy, modified).
#pragma once

#include <cstdint>

#include "base/assert.hpp"

namespace versa::detail {

enum class ReplicaState : std::uint8_t { invalid, shared, owned };

// What happens to a replica. "here" events concern the node where an access runs; "elsewhere"
// events are applied to every other replica of the same handle at the same moment.
enum class CoherenceEvent : std::uint8_t {
  read_here,        // a read access at this node; an invalid replica has had a copy issued into it
  write_here,       // write/commute/add here: the (valid) local data is about to be modified
  overwrite_here,   // write_only here: the local buffer will be overwritten without being read
  read_elsewhere,   // another node took a copy; an owned replica is no longer the only one
  write_elsewhere,  // another node took ownership
  evict,            // the replica's buffer is dropped; never the last valid copy
};

const char* to_string(ReplicaState state);
const char* to_string(CoherenceEvent event);

namespace coherence_table {
constexpr ReplicaState I = ReplicaState::invalid;
constexpr ReplicaState S = ReplicaState::shared;
constexpr ReplicaState O = ReplicaState::owned;
// Marks a transition that must never be asked for: writing here over an invalid replica (the
// data must be fetched first: read_here, then write_here), evicting an invalid replica (nothing
// to drop) or an owned one (it must be copied home first: read_elsewhere makes it shared).
constexpr ReplicaState X = static_cast<ReplicaState>(0xff);

//                                  from:  invalid shared owned
constexpr ReplicaState next[6][3] = {
    /* read_here       */ {S, S, O},
    /* write_here      */ {X, O, O},
    /* overwrite_here  */ {O, O, O},
    /* read_elsewhere  */ {I, S, S},
    /* write_elsewhere */ {I, I, I},
    /* evict           */ {X, I, X},
};
}  // namespace coherence_table

// The state a replica in `state` moves to on `event`. Asking for a forbidden transition is a
// bug in the runtime: VERSA_ASSERT catches it.
constexpr ReplicaState transition(ReplicaState state, CoherenceEvent event) {
  const ReplicaState next = coherence_table::next[static_cast<int>(event)][static_cast<int>(state)];
  VERSA_ASSERT(next != coherence_table::X, "forbidden replica transition");
  return next;
}

constexpr bool is_valid(ReplicaState state) { return state != ReplicaState::invalid; }

}  // namespace versa::detail
