#include "base/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace versa::detail {

void assertion_failed(const char* condition, const char* why, const char* file, int line) noexcept {
  std::fprintf(stderr, "versa: internal invariant violated: %s (%s) at %s:%d\n", why, condition,
               file, line);
  std::abort();
}

}  // namespace versa::detail
