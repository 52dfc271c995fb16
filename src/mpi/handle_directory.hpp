// What every rank knows of every distributed handle (docs/distributed.md): its owner, the rank
// that holds its latest version, the version number, the ranks with a valid copy of that
// version, and who takes part in an open run of adds. Every rank applies the same tasks in the
// same order to the same directory, so every rank reaches the same conclusions about who sends
// what to whom with no communication.
// Single-threaded: only the thread that submits touches it.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "mpi/copy_buffer.hpp"
#include "versa/detail/task_glue.hpp"

namespace versa::mpi::detail {

// A set of ranks, one bit each.
class RankSet {
 public:
  explicit RankSet(int ranks) : words_((static_cast<std::size_t>(ranks) + 63) / 64, 0) {}
  bool has(int rank) const { return (words_[word(rank)] >> bit(rank)) & 1; }
  void add(int rank) { words_[word(rank)] |= std::uint64_t{1} << bit(rank); }
  void clear() {
    for (std::uint64_t& w : words_) w = 0;
  }
  // Makes `rank` the only member.
  void reset_to(int rank) {
    clear();
    add(rank);
  }

 private:
  static std::size_t word(int rank) { return static_cast<std::size_t>(rank) / 64; }
  static unsigned bit(int rank) { return static_cast<unsigned>(rank) % 64; }
  std::vector<std::uint64_t> words_;
};

struct HandleRecord {
  versa::detail::HandleState* state;  // this rank's replica; null once the program destroyed it
  int owner;
  int holder;             // the rank that produced (or owns) the latest version
  std::uint64_t version;  // modifying accesses submitted so far
  RankSet valid;          // ranks holding the latest version (the cache: sent once per rank)
  // An open run of add accesses: the rank whose copy carries the value from before the run
  // (-1: no run open), and the ranks whose copies hold adds of the run.
  int base = -1;
  RankSet contributors;
  const CopyBuffer* buffer;   // this rank's memory for it, when the runtime allocated it
  std::uint32_t flushes = 0;  // after a flush, a rank may receive a version again
};

class HandleDirectory {
 public:
  explicit HandleDirectory(int ranks) : ranks_(ranks) {}

  // Registers the handle with the next global id, held by its owner at version 0.
  std::uint32_t add(versa::detail::HandleState* state, int owner, const CopyBuffer* buffer) {
    const auto id = static_cast<std::uint32_t>(records_.size());
    records_.push_back(
        HandleRecord{state, owner, owner, 0, RankSet(ranks_), -1, RankSet(ranks_), buffer, 0});
    records_.back().valid.add(owner);
    ids_[state] = id;
    return id;
  }
  // Ends the record of handle `id`, whose replica the program destroys: its id is never given
  // again, and a handle registered later at the same address gets a record of its own.
  void remove(std::uint32_t id) {
    ids_.erase(records_[id].state);
    records_[id].state = nullptr;
  }
  // The global id of the handle with this replica, or -1 when it is not registered here.
  std::int64_t find(const versa::detail::HandleState* state) const {
    auto it = ids_.find(state);
    return it == ids_.end() ? std::int64_t{-1} : std::int64_t{it->second};
  }
  HandleRecord& operator[](std::uint32_t id) { return records_[id]; }
  const HandleRecord& operator[](std::uint32_t id) const { return records_[id]; }
  std::size_t size() const { return records_.size(); }

 private:
  int ranks_;
  std::vector<HandleRecord> records_;
  std::unordered_map<const versa::detail::HandleState*, std::uint32_t> ids_;
};

}  // namespace versa::mpi::detail
