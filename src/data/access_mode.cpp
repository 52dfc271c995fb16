#include "versa/access_mode.hpp"

namespace versa {

const char* to_string(AccessMode mode) {
  if (is_user_defined(mode)) return "user-defined";
  switch (mode) {
    case AccessMode::read:
      return "read";
    case AccessMode::write:
      return "write";
    case AccessMode::write_only:
      return "write_only";
    case AccessMode::commute:
      return "commute";
    case AccessMode::add:
      return "add";
  }
  return "unknown";
}

}  // namespace versa
