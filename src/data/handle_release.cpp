// Destruction of handles, including the misuse of destroying one that tasks still use.
#include <chrono>
#include <thread>

#include "data/handle_state.hpp"
#include "versa/handle.hpp"

namespace versa::detail {

const std::string& handle_name(const HandleState* state) { return state->name(); }

void release_handle(HandleState* state) {
  if (!state) return;
  if (const std::uint64_t pending = state->pending_accesses(); pending != 0) {
    state->misuse_sink()->report_misuse(
        (state->name().empty() ? std::string("an unnamed handle")
                               : "handle '" + state->name() + "'") +
        " was destroyed while " + std::to_string(pending) +
        " of its accesses were pending; waiting for them to finish");
    while (state->pending_accesses() != 0)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  delete state;
}

}  // namespace versa::detail
