// The driver of versa_tests: GoogleTest's own main, and one line more when every test it ran was
// skipped (a CUDA test without a GPU), which ctest reports as skipped (tests/CMakeLists.txt runs
// one suite a process). Printed only then, so that it can never hide a failure. With
// VERSA_TEST_HANG_SECONDS, a test that runs longer aborts with its threads' stacks
// (hang_watchdog.hpp).
#include <gtest/gtest.h>

#include <cstdio>

#include "hang_watchdog.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (const std::chrono::seconds limit = versa::testing::HangWatchdog::limit_from_environment();
      limit.count() > 0)
    ::testing::UnitTest::GetInstance()->listeners().Append(
        new versa::testing::HangWatchdog(limit));  // owned by GoogleTest from here
  const int status = RUN_ALL_TESTS();
  const ::testing::UnitTest& tests = *::testing::UnitTest::GetInstance();
  if (status == 0 && tests.test_to_run_count() > 0 &&
      tests.skipped_test_count() == tests.test_to_run_count())
    std::printf("versa_tests: every test skipped\n");
  return status;
}
