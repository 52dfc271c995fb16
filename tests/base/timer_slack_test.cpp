#include "base/timer_slack.hpp"

#include <gtest/gtest.h>

#include <thread>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace versa::detail {
namespace {

#if defined(__linux__)
// The slack is the calling thread's: the thread that asks gets 1 us, the others keep theirs.
TEST(TimerSlack, FineForTheCallingThreadOnly) {
  const long before = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
  long in_thread = 0;
  std::thread([&] {
    ASSERT_EQ(prctl(PR_SET_TIMERSLACK, 50000UL, 0UL, 0UL, 0UL), 0);  // Linux's default
    use_fine_timer_slack();
    in_thread = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
  }).join();
  EXPECT_EQ(in_thread, 1000);
  EXPECT_EQ(prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL), before);
}
#endif

}  // namespace
}  // namespace versa::detail
