// Test helper: an environment variable set (or unset) for one scope.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace versa::testing_support {

// Sets `variable` to `value` (unsets it for nullptr) for the lifetime of the object, then
// restores its previous state, so a test cannot leak its setting into the next one. Only for
// the main thread of a test, while no other thread reads the environment.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* variable, const char* value) : variable_(variable) {
    if (const char* old = std::getenv(variable)) previous_ = old;
    if (value) {
      setenv(variable, value, 1);
    } else {
      unsetenv(variable);
    }
  }
  ~ScopedEnvironment() {
    if (previous_) {
      setenv(variable_, previous_->c_str(), 1);
    } else {
      unsetenv(variable_);
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* variable_;
  std::optional<std::string> previous_;
};

}  // namespace versa::testing_support
