// A stable least-significant-digit radix sort of 64-bit keys with their indices, for the Morton
// order of the octree's points: at 10^7 points it is several times faster than a comparison sort
// of indices, whose every comparison reads two keys at random.
#pragma once

#include <cstddef>
#include <cstdint>

#include "uninitialised_array.hpp"

namespace fmm {

// Sorts `keys` ascending by their bits from `first_bit` up (key >> first_bit; 0: the whole key)
// and returns where each came from: order[i] is the input position of the key now at i. Keys
// equal in those bits keep their input order, as std::stable_sort of the positions would give.
// Runs on all cores (parallel_for.hpp); the result does not depend on their number.
UninitialisedArray<std::size_t> stable_sort_keys(UninitialisedArray<std::uint64_t>& keys,
                                                 int first_bit = 0);

}  // namespace fmm
