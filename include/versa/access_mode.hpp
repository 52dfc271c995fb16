#pragma once

#include <cstdint>

namespace versa {

// How a task uses a handle. Dependencies follow from the order in which accesses are registered
// on each handle (DESIGN.md section 1):
//   read        waits for earlier write, write_only, commute and add accesses; runs alongside
//               the other reads of the same run of reads.
//   write       read-modify-write: waits for every earlier access; runs alone.
//   write_only  like write, but the old contents are not needed (never fetched).
//   commute     waits for earlier reads and writes; the accesses of one run of commutes exclude
//               each other but run in any order.
//   add         a contribution to a reduction into the handle: waits for earlier accesses of
//               other modes; the adds of one run run in parallel, each into its own partial
//               buffer unless it has the handle to itself, and the partials are combined with
//               the handle's reduction operator (versa/reduction.hpp) before the next access of
//               another mode. Needs an operator bound to the handle or the task type.
enum class AccessMode : std::uint8_t { read, write, write_only, commute, add };

// The name of a mode as written in the API ("read", "write", ...).
const char* to_string(AccessMode mode);

// True for modes that change the handle's contents.
constexpr bool modifies(AccessMode mode) { return mode != AccessMode::read; }

// True for modes whose task sees the handle's earlier contents: read, write and commute. Only
// these make a task depend on the success of earlier tasks: a task is cancelled when one of
// them finds its data spoilt by a failure (for a commute, one from before its run of commutes);
// add and write_only never cancel a task.
constexpr bool reads_contents(AccessMode mode) {
  return mode == AccessMode::read || mode == AccessMode::write || mode == AccessMode::commute;
}

// True for modes whose consecutive accesses may run in any order: commutes (one at a time,
// under the handle's exclusive flag) and adds (concurrently when renamed, else under the flag).
constexpr bool is_unordered(AccessMode mode) {
  return mode == AccessMode::commute || mode == AccessMode::add;
}

}  // namespace versa
