// What a call that should be refused says: the what() of the `Exception` it throws.
#pragma once

#include <string>

namespace versa::testing {

// The what() of the `Exception` that `action` throws, or a marker that matches none of the
// expected messages when it throws nothing (any other exception propagates and fails the test).
template <class Exception, class Action>
std::string message_of(Action&& action) {
  try {
    action();
  } catch (const Exception& e) {
    return e.what();
  }
  return "<no exception was thrown>";
}

}  // namespace versa::testing
