#include "cpu/asymmetric_fence.hpp"

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace versa::detail {

AsymmetricFence::AsymmetricFence() {
#if defined(__linux__)
  const long commands = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  // Registering is per process and idempotent: every pool may ask.
  expedited_ = commands > 0 && (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
               syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
}

void AsymmetricFence::heavy() const {
  full_fence();
#if defined(__linux__)
  // Cannot fail once registered (the kernel refuses only unregistered processes or bad flags).
  if (expedited_) syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
}

}  // namespace versa::detail
