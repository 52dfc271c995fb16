#pragma once

#include <cstdint>

namespace versa {

// How a task uses a handle. Dependencies follow from the order in which accesses are registered
// on each handle (DESIGN.md section 1):
//   read        waits for earlier write, write_only, commute and add accesses; runs alongside
//               the other reads of the same run of reads.
//   write       read-modify-write: waits for every earlier access; runs alone.
//   write_only  overwrites the whole handle without reading it. When earlier accesses still use
//               the handle, it is renamed (a fresh buffer, within Config::rename_memory_limit):
//               it waits for nobody, the earlier accesses keep the old buffer, and the accesses
//               after it see its buffer. Otherwise it is ordered like write (docs/guide.md says
//               when renaming is not done).
//   commute     waits for earlier reads and writes; the accesses of one run of commutes exclude
//               each other but run in any order.
//   add         a contribution to a reduction into the handle: waits for earlier accesses of
//               other modes; the adds of one run run in parallel, each into its own partial
//               buffer unless it has the handle to itself, and the partials are combined with
//               the handle's reduction operator (versa/reduction.hpp) before the next access of
//               another mode. Needs an operator bound to the handle or the task type.
// A program may define more modes by their properties (AccessType below).
enum class AccessMode : std::uint8_t { read, write, write_only, commute, add };

// A user-defined access mode, after SuperGlue's user-defined access types: defined by what it
// does to the data and how consecutive accesses of the same mode may run.
//   reads        the task sees the earlier contents (they are copied to where it runs, and a
//                failure before it cancels it); false: it overwrites everything, as write_only.
//   writes       the task changes the contents.
//   reorderable  consecutive accesses of this mode form a run whose members may run in any order
//                (after every earlier access, before every later one); false: each access is
//                ordered like write.
//   exclusive    the accesses of a run exclude each other (as commutes do); false: they run at
//                once (as reads do; for a mode that writes, the tasks coordinate themselves).
//   group        0-7: modes with the same properties but different groups form separate runs.
// Two modes form one run only if they are the same mode. Example: multiplications that commute
// with each other but not with commute's additions:
//   constexpr versa::AccessType multiply{.reorderable = true, .group = 1};
//   rt.submit(scale, versa::access<multiply>(h));
struct AccessType {
  bool reads = true;
  bool writes = true;
  bool reorderable = false;
  bool exclusive = true;
  int group = 0;

  // The mode's encoding: the properties in the bits of one byte, so that the scheduler reads
  // them without a table. Only the group's low three bits count (access<type>() refuses a group
  // out of range at compile time).
  constexpr AccessMode mode() const;
};

namespace detail {
// Bits of a user-defined mode; built-in modes have the top bit clear.
inline constexpr std::uint8_t user_mode_bit = 0x80;
inline constexpr std::uint8_t mode_reads = 0x01;
inline constexpr std::uint8_t mode_writes = 0x02;
inline constexpr std::uint8_t mode_reorderable = 0x04;
inline constexpr std::uint8_t mode_exclusive = 0x08;
inline constexpr int mode_group_shift = 4;
constexpr std::uint8_t bits(AccessMode mode) { return static_cast<std::uint8_t>(mode); }
constexpr bool has_bit(AccessMode mode, std::uint8_t bit) {
  return (bits(mode) & user_mode_bit) && (bits(mode) & bit);
}
}  // namespace detail

constexpr AccessMode AccessType::mode() const {
  return static_cast<AccessMode>(detail::user_mode_bit | (reads ? detail::mode_reads : 0) |
                                 (writes ? detail::mode_writes : 0) |
                                 (reorderable ? detail::mode_reorderable : 0) |
                                 (reorderable && exclusive ? detail::mode_exclusive : 0) |
                                 ((group & 7) << detail::mode_group_shift));
}

// Whether `mode` was defined with AccessType.
constexpr bool is_user_defined(AccessMode mode) {
  return detail::bits(mode) & detail::user_mode_bit;
}

// The name of a mode as written in the API ("read", "write", ...); "user-defined" for the
// modes of AccessType.
const char* to_string(AccessMode mode);

// True for modes that change the handle's contents.
constexpr bool modifies(AccessMode mode) {
  return is_user_defined(mode) ? detail::has_bit(mode, detail::mode_writes)
                               : mode != AccessMode::read;
}

// True for modes whose task sees the handle's earlier contents: read, write and commute (and
// user-defined modes that read). Only these make a task depend on the success of earlier
// tasks: a task is cancelled when one of them finds its data spoilt by a failure (for a
// commute, one from before its run of commutes); add and write_only never cancel a task.
constexpr bool reads_contents(AccessMode mode) {
  if (is_user_defined(mode)) return detail::has_bit(mode, detail::mode_reads);
  return mode == AccessMode::read || mode == AccessMode::write || mode == AccessMode::commute;
}

// True for modes that replace the contents without reading them: write_only, and user-defined
// modes that write without reading. Their data is never copied in, and one that runs makes
// data spoilt by a failure valid again.
constexpr bool overwrites(AccessMode mode) {
  if (is_user_defined(mode))
    return detail::has_bit(mode, detail::mode_writes) && !detail::has_bit(mode, detail::mode_reads);
  return mode == AccessMode::write_only;
}

// True for modes whose consecutive accesses may run in any order: commutes (one at a time,
// under the handle's exclusive flag), adds (concurrently when renamed, else under the flag) and
// reorderable user-defined modes.
constexpr bool is_unordered(AccessMode mode) {
  return mode == AccessMode::commute || mode == AccessMode::add ||
         detail::has_bit(mode, detail::mode_reorderable);
}

// True for modes whose consecutive accesses form one run that waits for the same version:
// reads and the unordered modes.
constexpr bool forms_runs(AccessMode mode) {
  return mode == AccessMode::read || is_unordered(mode);
}

// True for modes whose accesses of one run exclude each other through the handle's flag:
// commutes and exclusive user-defined modes (adds take it only when they are not renamed).
constexpr bool needs_exclusive(AccessMode mode) {
  return mode == AccessMode::commute || detail::has_bit(mode, detail::mode_exclusive);
}

// True for modes whose accesses of one run write the data at once: user-defined modes that
// write, reorderable and not exclusive. They must all write one copy of the data, so in a
// runtime with accelerators their tasks run on the CPU.
constexpr bool writes_at_once(AccessMode mode) {
  return is_user_defined(mode) && modifies(mode) && forms_runs(mode) && !needs_exclusive(mode);
}

}  // namespace versa
