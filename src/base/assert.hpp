// VERSA_ASSERT: invariant checks that a build switch turns on anywhere. Active in Debug builds
// and whenever VERSA_ASSERTS is 1 (the CMake option VERSA_ASSERTS=ON, which the ThreadSanitizer
// build of the tests sets, so that every invariant is checked under concurrency); otherwise
// the condition is not evaluated. A failed check is a bug in Versa: it names the condition and
// the place, and aborts.
#pragma once

#if !defined(NDEBUG) || (defined(VERSA_ASSERTS) && VERSA_ASSERTS)
#define VERSA_ASSERTS_ON 1
#else
#define VERSA_ASSERTS_ON 0
#endif

namespace versa::detail {
[[noreturn]] void assertion_failed(const char* condition, const char* why, const char* file,
                                   int line) noexcept;
}  // namespace versa::detail

#if VERSA_ASSERTS_ON
#define VERSA_ASSERT(condition, why) \
  ((condition) ? void(0) : ::versa::detail::assertion_failed(#condition, why, __FILE__, __LINE__))
#else
#define VERSA_ASSERT(condition, why) void(0)
#endif
