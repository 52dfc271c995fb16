// Random task programs and their sequential model, shared by the fuzz tests
// (tests/core/fuzz_test.cpp) and the soak benchmark (bench/soak): thousands of tasks over tens
// of handles with random access modes, durations, placements, nested tasks and injected
// failures. A run under Versa must leave exactly the data, and let every task observe exactly
// the values, of the sequential execution of the same program.
//
// Each handle is a block of `width` values: a task updates the first and derives the others from
// it, and observes the first and the last, so a copy that moved part of a block shows.
//
// Updates are chosen so that any ordering mistake shows: `write` mixes the old value with what
// the task read (not commutative), `write_only` ignores the old value, `commute` adds to the
// first value (commutative, so any order within their run is correct), `add` adds to every
// value, through the handle's sum operator (renamed adds see a partial, not the data), and
// `multiply`, a user-defined mode (a second commuting group), multiplies the first value by an
// odd number. A write_only registered while its handle is in use is renamed.
//
// With failure injection, some tasks throw (before or after updating their data), and the
// sequential model applies the failure rule of access_mode.hpp: a task is cancelled when a
// read, write or commute finds its handle failed (a commute: failed before its run began); a
// failed or cancelled task leaves what it modifies failed; a write_only that runs makes its
// handle valid. Every handle must end failed in both executions, or valid with the same value.
//
// Every sixth handle is scratch data (Runtime::scratch: the runtime's memory, starting at zero),
// read through acquire() at the end.
//
// Every seventh task has priority 1, the one after it -1 (from its number, so that the random
// draws, and so the programs, are those of before priorities).
//
// With devices, each task also gets a random placement rule; a task with children may run on a
// device, where it creates handles, spawns, syncs and destroys the handles inside its body.
// Under Versa, every eighth task's first handle is copied home right after it
// (Runtime::copy_home).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "versa/versa.hpp"

namespace versa::fuzz {

using Value = std::uint64_t;
using versa::AccessMode;

struct AccessSpec {
  int handle;
  AccessMode mode;
};

constexpr int width = 8;

// Where an injected failure strikes: before the task touches its data, or after.
enum class Failing { no, before_updates, after_updates };

struct TaskSpec {
  int id = 0;
  std::vector<AccessSpec> accesses;
  int spin_ns = 0;
  versa::Placement placement = versa::Placement::cpu_only;
  // Reorders ready tasks only; on a device with high-priority streams, a positive one runs there.
  int priority = 0;
  Failing fails = Failing::no;
  // Children: spawned over the task's private handles, then folded into its first write.
  std::vector<TaskSpec> children;
};

constexpr int private_handles = 3;

struct Program {
  int handles = 0;
  std::vector<TaskSpec> tasks;
};

struct Outcome {
  std::vector<Value> data;
  std::vector<Value> observed;  // 0 for the tasks that failed or were cancelled
  std::vector<versa::DeviceStatistics> statistics;
  std::vector<bool> failed;   // per handle, at the end
  int cancelled = 0;          // tasks cancelled (counted by the sequential model only)
  std::uint64_t renamed = 0;  // write_only accesses renamed (by the runtime only)
  std::string reported = {};  // what wait_all threw (by the runtime only), or ""
};

// A program of `tasks` top-level tasks over `handles` handles, drawn from `seed`; with
// `fail_one_in`, a top-level task fails with probability 1 / fail_one_in (0: none fails).
Program random_program(std::uint64_t seed, int tasks, int handles, int fail_one_in = 0);
// Whether some task of `program` is drawn to fail.
bool has_failures(const Program& program);
// The program run in order on one thread, with the failure rule applied.
Outcome sequential(const Program& program);
// The program run by a Versa runtime made with `config`. Throws std::logic_error on a malformed
// program.
Outcome parallel(const Program& program, versa::Config config);

}  // namespace versa::fuzz
