// The task pool grows with the number of pending tasks and is reused afterwards.
#include <gtest/gtest.h>

#include "versa/versa.hpp"

namespace {

TEST(TaskMemory, GrowsWithPendingTasksAndIsReused) {
  versa::Config config;
  config.cpu_workers = 2;
  config.pin_workers = false;
  versa::Runtime rt{config};
  auto gate = rt.token("gate");
  auto empty = versa::task_type("empty").cpu([] {});
  const std::size_t initial = rt.task_memory_bytes();
  {
    auto held = rt.acquire(versa::write(gate));
    for (int i = 0; i < 50000; ++i) rt.submit(empty, versa::read(gate));
  }
  rt.wait_all();
  const std::size_t grown = rt.task_memory_bytes();
  EXPECT_GE(grown, initial + 50000 * 64u);  // every pending task holds a record
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 50000; ++i) rt.submit(empty);
    rt.wait_all();
  }
  EXPECT_EQ(rt.task_memory_bytes(), grown);  // recycled, not grown
}

}  // namespace
