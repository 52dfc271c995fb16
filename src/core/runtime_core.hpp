// The runtime behind versa::Runtime: task life cycle (create, register, park, ready, run,
// finish), failure propagation, host access and the shutdown sequence.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/failure.hpp"
#include "core/task.hpp"
#include "core/task_pool.hpp"
#include "core/trace.hpp"
#include "cpu/topology.hpp"
#include "cpu/worker_pool.hpp"
#include "versa/config.hpp"
#include "versa/task_type.hpp"

namespace versa::detail {

class RuntimeCore final : public TaskRunner, public MisuseSink {
 public:
  explicit RuntimeCore(Config config);
  ~RuntimeCore();

  int cpu_workers() const { return workers_->size(); }
  std::size_t task_memory_bytes() const { return task_pool_.bytes_reserved(); }

  HandleState* create_handle(const void* data, Layout layout, std::string name);
  void submit(const TaskDesc& desc);
  const char* intern_name(std::string_view name);
  void keep_alive(const std::shared_ptr<TaskTypeBase>& type);
  Task* acquire_host(AccessRecord& record);
  void release_host(Task* ticket);
  void sync();
  void wait_all();

  // Records a misuse detected away from the call that caused it (e.g. a handle destroyed while
  // in use); wait_all rethrows it as std::logic_error.
  void report_misuse(std::string message) override;

  // TaskRunner
  void run_task(Task* task, int worker) override;
  void worker_idle(int worker) override;
  void worker_started(int worker) override;
  void worker_stopping(int worker) override;

 private:
  struct alignas(64) WorkerLocal {
    std::int64_t finished = 0;  // tasks finished and not yet subtracted from pending_
  };

  void validate(const TaskDesc& desc, const Task* parent) const;
  Task* create_task(const TaskDesc& desc, int worker);
  bool try_make_ready(Task* task, int worker);
  bool take_exclusive_flags(Task* task, int worker);
  void schedule(Task* task, int worker);
  void wake(Waiter* waiter, int worker);
  void finish_accesses(Task* task, int worker);
  void finish_task(Task* task, int worker);
  void flush_finished(int worker);
  void destroy_task(Task* task, int worker);
  void record_failure(std::shared_ptr<const Failure> failure);
  void wait_for_pending();

  const std::uint64_t id_;  // distinguishes runtimes in thread-local caches
  Config config_;
  Topology topology_;
  TaskPool task_pool_;
  TraceRecorder trace_;
  std::vector<WorkerLocal> worker_locals_;  // each element owned by its worker thread

  // Tasks submitted and not yet finished, minus what workers have finished but not flushed.
  // Submissions add immediately (so the count can never reach zero early); workers subtract in
  // batches when they run out of work, so the line is not bounced once per task.
  std::atomic<std::int64_t> pending_{0};
  // Parent of the tasks spawned by the main program (outside any task).
  Task root_;

  std::mutex failures_mutex_;
  std::vector<std::shared_ptr<const Failure>> failures_;  // guarded by failures_mutex_
  std::vector<std::string> misuses_;                      // guarded by failures_mutex_
  std::atomic<std::uint64_t> cancelled_{0};

  std::mutex names_mutex_;
  std::unordered_set<std::string> names_;  // guarded by names_mutex_; node-based: stable c_str()
  std::mutex types_mutex_;
  std::vector<std::shared_ptr<TaskTypeBase>> types_;  // guarded by types_mutex_

  // Last: its threads start in its constructor and must see everything above initialised.
  std::unique_ptr<WorkerPool> workers_;
};

}  // namespace versa::detail
