#include "core/live_tasks.hpp"

#include <cstdint>

namespace versa::detail {

LiveTasks::Shard& LiveTasks::shard_of(const Task* task) {
  // Task slots are a few cache lines apart: drop the bits that every slot shares.
  const auto address = reinterpret_cast<std::uintptr_t>(task);
  return shards_[(address >> 6 ^ address >> 12) % shard_count];
}

void LiveTasks::add(const Task* task) {
  Shard& shard = shard_of(task);
  MutexLock guard(shard.mutex);
  shard.tasks.emplace(task, Placement{});
}

void LiveTasks::remove(const Task* task) {
  Shard& shard = shard_of(task);
  MutexLock guard(shard.mutex);
  shard.tasks.erase(task);
}

void LiveTasks::placed(const Task* task, int node, bool launched) {
  Shard& shard = shard_of(task);
  MutexLock guard(shard.mutex);
  auto found = shard.tasks.find(task);
  if (found != shard.tasks.end()) found->second = {node, launched};
}

std::vector<std::pair<const Task*, LiveTasks::Placement>> LiveTasks::listed()
    VERSA_NO_THREAD_SAFETY_ANALYSIS {
  std::vector<std::pair<const Task*, Placement>> tasks;
  for (Shard& shard : shards_) tasks.insert(tasks.end(), shard.tasks.begin(), shard.tasks.end());
  return tasks;
}

bool LiveTasks::host_access_waiting() {
  for (Shard& shard : shards_) {
    MutexLock guard(shard.mutex);
    for (const auto& [task, where] : shard.tasks)
      if (task->host_access && !task->host_ready.load(std::memory_order_acquire)) return true;
  }
  return false;
}

}  // namespace versa::detail
