#include "base/timer_slack.hpp"

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace versa::detail {

void use_fine_timer_slack() {
#if defined(__linux__)
  // Best effort: a refusal only leaves the default slack.
  (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
#endif
}

}  // namespace versa::detail
