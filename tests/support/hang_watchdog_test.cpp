#include "support/hang_watchdog.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "support/scoped_environment.hpp"

namespace {

// A test that outlives the limit aborts, naming itself; one that ends in time does not.
TEST(HangWatchdog, AbortsATestThatRunsPastItsLimitNamingIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const ::testing::TestInfo& self = *::testing::UnitTest::GetInstance()->current_test_info();
  EXPECT_DEATH(
      {
        versa::testing::HangWatchdog watchdog(std::chrono::seconds(1));
        watchdog.OnTestStart(self);
        std::this_thread::sleep_for(std::chrono::seconds(60));
      },
      "HangWatchdog.AbortsATestThatRunsPastItsLimitNamingIt has run for more than 1 s");
  versa::testing::HangWatchdog watchdog(std::chrono::seconds(1));
  watchdog.OnTestStart(self);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  watchdog.OnTestEnd(self);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the limit, no test runs
}

TEST(HangWatchdog, TakesItsLimitFromTheEnvironment) {
  using std::chrono::seconds;
  {
    const versa::testing_support::ScopedEnvironment set("VERSA_TEST_HANG_SECONDS", "300");
    EXPECT_EQ(versa::testing::HangWatchdog::limit_from_environment(), seconds(300));
  }
  for (const char* bad : {"", "0", "-5", "12x"}) {
    const versa::testing_support::ScopedEnvironment set("VERSA_TEST_HANG_SECONDS", bad);
    EXPECT_EQ(versa::testing::HangWatchdog::limit_from_environment(), seconds(0)) << bad;
  }
}

}  // namespace
