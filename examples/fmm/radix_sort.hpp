// A stable least-significant-digit radix sort of 64-bit keys with their indices, for the Morton
// order of the octree's points: at 10^7 points it is several times faster than a comparison sort
// of indices, whose every comparison reads two keys at random.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fmm {

// Sorts `keys` ascending and returns where each came from: order[i] is the input position of the
// key now at i. Equal keys keep their input order, as std::stable_sort of the positions by key
// would give. Runs on all cores (parallel_for.hpp); the result does not depend on their number.
std::vector<std::size_t> stable_sort_keys(std::vector<std::uint64_t>& keys);

}  // namespace fmm
