// What the distributed layer needs of versa::Runtime beyond its public API: submitting a task
// described by hand (the transfer tasks, which are no user's typed body), and making a rank's
// runtime of a configuration it has adjusted after applying the environment.
#pragma once

#include <memory>
#include <string_view>
#include <utility>

#include "versa/runtime.hpp"

namespace versa::detail {

struct RuntimeAccess {
  // A runtime of `config`, to which Config::from_environment was applied already.
  static std::unique_ptr<Runtime> make(Config config) {
    return std::unique_ptr<Runtime>(new Runtime(std::move(config), Runtime::EnvironmentApplied{}));
  }
  static void submit(Runtime& runtime, const TaskDesc& desc) { runtime.submit_task(desc); }
  static void copy_home(Runtime& runtime, HandleState* state) { runtime.copy_home(state); }
  static void refuse_waiting_on_own_views(Runtime& runtime) {
    runtime.refuse_waiting_on_own_views();
  }
  // A name that lives as long as the runtime.
  static const char* intern(Runtime& runtime, std::string_view name) {
    return runtime.intern_name(name);
  }
};

}  // namespace versa::detail
