// Turns a test that hangs into a diagnosis: when one test has run for longer than
// VERSA_TEST_HANG_SECONDS (ctest sets it to half the suite's timeout: support/add_suites.cmake),
// the watchdog prints the test's name and the stacks of every thread of the process (through
// gdb, when it is installed), then aborts. Without it, ctest would kill the process at its
// timeout and show only that the test had started.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace versa::testing {

class HangWatchdog : public ::testing::EmptyTestEventListener {
 public:
  explicit HangWatchdog(std::chrono::seconds limit);
  ~HangWatchdog() override;
  HangWatchdog(const HangWatchdog&) = delete;
  HangWatchdog& operator=(const HangWatchdog&) = delete;

  // The limit VERSA_TEST_HANG_SECONDS sets, or 0 when it is unset or not a positive number.
  static std::chrono::seconds limit_from_environment();

  void OnTestStart(const ::testing::TestInfo& test) override;
  void OnTestEnd(const ::testing::TestInfo& test) override;

 private:
  void watch();
  [[noreturn]] void report_hang(const std::string& test);

  const std::chrono::seconds limit_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string running_;  // the test running now, empty between tests
  std::chrono::steady_clock::time_point started_;
  std::uint64_t starts_ = 0;  // tests started, so that the watcher knows a new one began
  bool stopping_ = false;
  std::thread thread_;  // last: it starts watching once the members above exist
};

}  // namespace versa::testing
