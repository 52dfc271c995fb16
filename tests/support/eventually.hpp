// Bounded waiting for what another thread does: a test whose awaited event never comes fails
// instead of hanging.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace versa::testing {

// Polls `done` until it holds or `limit` passes; returns whether it held.
inline bool eventually(const std::function<bool()>& done,
                       std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

// Waits until `flag` is set or `limit` passes; returns whether it was set.
inline bool eventually(const std::atomic<bool>& flag,
                       std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  return eventually([&flag] { return flag.load(); }, limit);
}

}  // namespace versa::testing
