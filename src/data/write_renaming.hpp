// Renaming of accesses that overwrite a handle without reading it (write_only, and user-defined
// modes that write without reading): the buffers of renamed instances (data/handle_state.hpp),
// within a memory budget, and the handles whose data is away from home because of it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/handle_state.hpp"
#include "data/partial_pool.hpp"

namespace versa::detail {

class WriteRenaming {
 public:
  // `budget`: bytes the buffers of renamed instances may hold at once (Config::
  // rename_memory_limit); 0 disables renaming.
  explicit WriteRenaming(std::size_t budget) : buffers_(budget), enabled_(budget > 0) {}

  // Registers an access of `root` (a handle as the user holds it) in `mode`, which overwrites
  // the data: on a fresh instance when earlier accesses are still pending and the budget
  // allows; otherwise as any other access.
  Registration register_overwrite(HandleState& root, AccessMode mode);

  // Copies the data of `instance`, the newest instance of `root`, into the root's buffer, with
  // its failure state: called by the access that brings the data home (HandleState::
  // register_homecoming), which excludes every other access of both; `instance_required` and
  // `root_required` are the versions its two halves required.
  static void copy_home(HandleState& instance, std::uint64_t instance_required, HandleState& root,
                        std::uint64_t root_required);

  // The handles that were ever renamed (wait_all brings them home), and forgetting one when it
  // is destroyed. A handle stays listed while it is home: unlisting it when its data came home
  // could race with a rename registered meanwhile, which would then be missed.
  std::vector<HandleState*> renamed_handles() { return buffers_.listed(); }
  void forget(HandleState* root) { buffers_.unlist(root); }

  // Accesses renamed so far.
  std::uint64_t renamed_accesses() const { return renamed_.load(std::memory_order_relaxed); }

  // Bytes of buffers held (in use or pooled for reuse), and freeing the pooled ones.
  std::size_t memory_bytes() const { return buffers_.host_bytes(); }
  void trim() { buffers_.trim(); }

 private:
  PartialPool buffers_;
  const bool enabled_;
  std::atomic<std::uint64_t> renamed_{0};
};

}  // namespace versa::detail
