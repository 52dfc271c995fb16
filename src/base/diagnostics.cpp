#include "base/diagnostics.hpp"

#include <cstdio>

namespace versa::detail {

Diagnostics::~Diagnostics() {
  MutexLock guard(mutex_);
  for (const std::string& message : held_)
    std::fprintf(stderr, "%s: %s\n", label_.c_str(), message.c_str());
}

void Diagnostics::report(std::string message) {
  if (hook_) {
    hook_(message);
    return;
  }
  MutexLock guard(mutex_);
  held_.push_back(std::move(message));
}

}  // namespace versa::detail
