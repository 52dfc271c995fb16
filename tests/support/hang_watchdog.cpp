#include "hang_watchdog.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace versa::testing {

HangWatchdog::HangWatchdog(std::chrono::seconds limit)
    : limit_(limit), thread_([this] { watch(); }) {}

HangWatchdog::~HangWatchdog() {
  {
    const std::lock_guard<std::mutex> guard(mutex_);
    stopping_ = true;
  }
  changed_.notify_one();
  thread_.join();
}

std::chrono::seconds HangWatchdog::limit_from_environment() {
  const char* value = std::getenv("VERSA_TEST_HANG_SECONDS");
  if (!value) return std::chrono::seconds(0);
  char* end = nullptr;
  const long seconds = std::strtol(value, &end, 10);
  return std::chrono::seconds(end != value && *end == '\0' && seconds > 0 ? seconds : 0);
}

void HangWatchdog::OnTestStart(const ::testing::TestInfo& test) {
  {
    const std::lock_guard<std::mutex> guard(mutex_);
    running_ = std::string(test.test_suite_name()) + "." + test.name();
    started_ = std::chrono::steady_clock::now();
    ++starts_;
  }
  changed_.notify_one();
}

void HangWatchdog::OnTestEnd(const ::testing::TestInfo&) {
  {
    const std::lock_guard<std::mutex> guard(mutex_);
    running_.clear();
  }
  changed_.notify_one();
}

void HangWatchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !running_.empty(); });
    if (stopping_) return;
    const std::uint64_t test = starts_;
    const auto deadline = started_ + limit_;
    if (!changed_.wait_until(lock, deadline,
                             [&] { return stopping_ || starts_ != test || running_.empty(); }))
      report_hang(running_);
  }
}

void HangWatchdog::report_hang(const std::string& test) {
  std::fprintf(stderr,
               "\nversa_tests: %s has run for more than %lld s (VERSA_TEST_HANG_SECONDS); the "
               "stacks of the process's threads follow, then it aborts.\n",
               test.c_str(), static_cast<long long>(limit_.count()));
  std::fflush(stderr);
  // gdb runs as a child of this process, which Yama's ptrace_scope 1 lets attach only when the
  // process allows it.
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  const std::string command = "if command -v gdb >/dev/null; then gdb -p " +
                              std::to_string(::getpid()) +
                              " -batch -nx -ex 'thread apply all bt' 1>&2 2>/dev/null; "
                              "else echo 'versa_tests: gdb is not installed: no stacks' 1>&2; fi";
  if (std::system(command.c_str()) != 0) std::fprintf(stderr, "versa_tests: gdb failed\n");
  std::fflush(stderr);
  std::abort();
}

}  // namespace versa::testing
