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
//   add         a reduction into the handle: waits for earlier reads and writes; adds of one
//               run may be reordered. Currently executed like commute.
enum class AccessMode : std::uint8_t { read, write, write_only, commute, add };

// The name of a mode as written in the API ("read", "write", ...).
const char* to_string(AccessMode mode);

// True for modes that change the handle's contents.
constexpr bool modifies(AccessMode mode) { return mode != AccessMode::read; }

// True for modes whose accesses in one run must not overlap in time but may be reordered.
constexpr bool is_exclusive_run(AccessMode mode) {
  return mode == AccessMode::commute || mode == AccessMode::add;
}

}  // namespace versa
