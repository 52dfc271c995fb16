// What the machine allows, with no runtime at all. Not a peer. The efficiency pattern's bound:
// plain threads taking task numbers from one atomic counter and running the same busy-wait, which
// shows how much of a runtime's shortfall from 1.0 is the machine's (the busy-wait overshoots its
// time by the cost of a clock read; two threads on two virtual cores do not get two whole cores).
// And the round trip of a cache line between two threads, the unit of every hand-off's cost,
// which on a virtual machine varies several times over with where the host places its cores.
#include <atomic>
#include <latch>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/harness.hpp"
#include "micro/systems.hpp"

namespace bench {
namespace {

// `workers` threads, the calling one among them (as libgomp's and oneTBB's), started before the
// clock and released together.
double independent(int workers, long tasks, double task_us) {
  if (workers < 1) throw std::invalid_argument("threads: workers must be at least 1");
  std::atomic<long> next{0};
  std::latch start(workers);
  const auto work = [&] {
    start.arrive_and_wait();
    while (next.fetch_add(1, std::memory_order_relaxed) < tasks) busy_wait_us(task_us);
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < workers; ++i) threads.emplace_back(work);
  const auto begin = Clock::now();
  work();
  for (std::thread& thread : threads) thread.join();
  return seconds_since(begin);
}

// Each round: this thread writes the line, the other sees it and writes it back.
double round_trip(long rounds) {
  std::atomic<long> line{0};
  std::thread echo([&] {
    for (long i = 0; i < rounds; ++i) {
      while (line.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.store(2 * i + 2, std::memory_order_release);
    }
  });
  const auto begin = Clock::now();
  for (long i = 0; i < rounds; ++i) {
    line.store(2 * i + 1, std::memory_order_release);
    while (line.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const double seconds = seconds_since(begin);
  echo.join();
  return seconds;
}

}  // namespace

std::vector<System> thread_systems() {
  System system;
  system.name = "threads";
  system.independent = independent;
  system.round_trip = round_trip;
  return {system};
}

}  // namespace bench
