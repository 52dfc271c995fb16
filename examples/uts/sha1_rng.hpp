// The splittable random numbers of the Unbalanced Tree Search benchmark (Olivier et al., "UTS: An
// Unbalanced Tree Search Benchmark", LCPC 2006): every node of a tree carries a 20-byte state, the
// SHA-1 digest of its parent's state and its index among its siblings, so a node's children and
// their random numbers are the same however the tree is traversed, and no two threads share a
// generator. This is the reference's default generator (its rng/brg_sha1.c), byte for byte, with
// the digest computed by OpenSSL's libcrypto.
#pragma once

#include <array>
#include <cstdint>

namespace uts {

// A node's random state: one SHA-1 digest.
struct RngState {
  std::array<std::uint8_t, 20> bytes{};

  bool operator==(const RngState&) const = default;
};

// The root's state for `seed` (the reference's -r): the digest of 16 zero bytes followed by the
// seed's four bytes, most significant first.
RngState rng_root(std::int32_t seed);

// The state of child number `index` (0-based) of the node whose state is `parent`: the digest of
// the parent's 20 bytes followed by the index's four bytes, most significant first. This is the
// benchmark's unit of work: one SHA-1 per node.
RngState rng_child(const RngState& parent, std::int32_t index);

// The state's random number, uniform on [0, 2^31): its last four bytes read most significant first,
// top bit cleared.
inline std::int32_t rng_rand(const RngState& state) {
  const std::uint32_t word = std::uint32_t{state.bytes[16]} << 24 |
                             std::uint32_t{state.bytes[17]} << 16 |
                             std::uint32_t{state.bytes[18]} << 8 | std::uint32_t{state.bytes[19]};
  return static_cast<std::int32_t>(word & 0x7fffffffu);
}

// `rand` (a value of rng_rand) as a probability on [0, 1), as the reference divides it.
inline double rng_to_probability(std::int32_t rand) { return rand / 2147483648.0; }

}  // namespace uts
