#include "sha1_rng.hpp"

// SHA1_Init/Update/Final are deprecated in OpenSSL 3 in favour of the EVP interface, but they are
// still part of libcrypto and are what a tree search wants: on a 24-byte message they take about
// 80 ns, where EVP with a reused context takes 210 ns and the one-shot SHA1(), which fetches the
// algorithm on every call, 850 ns (OpenSSL 3.0, AMD EPYC with SHA extensions). The hash is the
// whole of the benchmark's work, so the faster path is the faithful one.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <cstddef>

namespace uts {
namespace {

void put_big_endian(std::int32_t value, std::uint8_t* out) {
  const auto bits = static_cast<std::uint32_t>(value);
  out[0] = static_cast<std::uint8_t>(bits >> 24);
  out[1] = static_cast<std::uint8_t>(bits >> 16);
  out[2] = static_cast<std::uint8_t>(bits >> 8);
  out[3] = static_cast<std::uint8_t>(bits);
}

// The digest of `prefix_length` bytes at `prefix` followed by `value`'s four bytes, most
// significant first: what both the root and a child hash.
RngState digest(const std::uint8_t* prefix, std::size_t prefix_length, std::int32_t value) {
  std::uint8_t suffix[4];
  put_big_endian(value, suffix);
  SHA_CTX context;
  SHA1_Init(&context);
  SHA1_Update(&context, prefix, prefix_length);
  SHA1_Update(&context, suffix, sizeof suffix);
  RngState result;
  SHA1_Final(result.bytes.data(), &context);
  return result;
}

}  // namespace

// The reference hashes a 20-byte buffer holding 16 zeros and then the seed.
RngState rng_root(std::int32_t seed) {
  constexpr std::uint8_t zeros[16] = {};
  return digest(zeros, sizeof zeros, seed);
}

RngState rng_child(const RngState& parent, std::int32_t index) {
  return digest(parent.bytes.data(), parent.bytes.size(), index);
}

}  // namespace uts
