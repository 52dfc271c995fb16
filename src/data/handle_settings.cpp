// The settings of a handle that its public methods change: its reduction operator, whether it
// writes back, and data declared zero.
#include <stdexcept>

#include "base/names.hpp"
#include "data/handle_registry.hpp"
#include "data/handle_state.hpp"
#include "versa/handle.hpp"

namespace versa::detail {

const std::string& handle_name(const HandleState* state) { return state->name(); }

void set_handle_write_back(HandleState* state, bool write_back) {
  if (!state) throw std::invalid_argument("set_write_back: empty handle");
  state->set_write_back(write_back);
}

void declare_handle_zero(HandleState* state) {
  if (!state) throw std::invalid_argument("declare_zero: empty handle");
  if (state->registry()) state->registry()->register_deferred_tasks();
  ReplicaSet* replicas = state->replicas();
  if (!replicas) return;  // no devices: nothing to spare
  bool used = state->pending_accesses() != 0;
  MutexLock guard(replicas->mutex());
  for (int node = 1; node < replicas->nodes(); ++node)
    used = used || replicas->at(node).state != ReplicaState::invalid;
  if (used)
    throw std::logic_error("declare_zero: " + quoted_handle(state->name()) +
                           " has tasks pending or copies on devices; declare it before tasks "
                           "use it");
  replicas->declare_host_zero();
}

void set_handle_reduction(HandleState* state, std::shared_ptr<const ReductionOps> ops) {
  if (!state) throw std::invalid_argument("set_reduction: empty handle");
  // The adds submitted before use the operator they were submitted with.
  if (state->registry()) state->registry()->register_deferred_tasks();
  const ReductionOps* raw = ops.get();
  const std::string refused = state->bind_reduction(raw, std::move(ops), true);
  if (!refused.empty())
    throw std::logic_error("cannot set the reduction of " + quoted_handle(state->name()) + ": " +
                           refused);
}

}  // namespace versa::detail
