// What the distributed layer needs of versa::Runtime beyond its public API: submitting a task
// described by hand (the transfer tasks, which are no user's typed body).
#pragma once

#include <string_view>

#include "versa/runtime.hpp"

namespace versa::detail {

struct RuntimeAccess {
  static void submit(Runtime& runtime, const TaskDesc& desc) { runtime.submit_task(desc); }
  static void copy_home(Runtime& runtime, HandleState* state) { runtime.copy_home(state); }
  // A name that lives as long as the runtime.
  static const char* intern(Runtime& runtime, std::string_view name) {
    return runtime.intern_name(name);
  }
};

}  // namespace versa::detail
