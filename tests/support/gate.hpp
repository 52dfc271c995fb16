// A gate that holds a task until the test opens it: bounded, so that a test that never opens it
// fails instead of hanging.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

namespace versa::testing {

struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> reached{false};  // a task came to the gate
  void pass() {
    reached = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!open.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
};

}  // namespace versa::testing
