// The workers' sleep protocol and the work they pull from outside their deques
// (TaskRunner::pull_work): work that appears after a worker's last pull, with no wake-up, in the
// instant before it sleeps, is still taken. That is how a task pooled for placement by a thread
// that saw no sleeper yet once waited with every worker asleep.
#include "cpu/worker_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "base/task.hpp"
#include "cpu/topology.hpp"
#include "support/eventually.hpp"

namespace {

using versa::detail::Task;
using versa::detail::TaskRunner;
using versa::detail::WorkerPool;

// A runner whose only work is one task held outside the deques, as the placement pool holds
// tasks. It appears, without a wake-up, when the worker says it is about to sleep: after its
// last pull and before it counts itself among the sleepers, where a pusher sees no sleeper.
class WorkInTheWindow final : public TaskRunner {
 public:
  std::atomic<int> ran{0};

  // From now on, the next time the worker is about to sleep, the work appears.
  void arm(WorkerPool& pool) { pool_.store(&pool); }

  void run_task(Task* task, int) override {
    EXPECT_EQ(task, &task_);
    ran.fetch_add(1);
  }
  void worker_idle(int) override {}
  void worker_sleeping(int) override {
    if (pool_.load() && !appeared_) {
      appeared_ = true;
      held_.store(true);
    }
  }
  bool pull_work(int worker) override {
    if (!held_.exchange(false)) return false;
    pool_.load()->push_local(worker, &task_);
    return true;
  }
  bool work_to_pull() const override { return held_.load(); }
  void worker_started(int) override {}
  void worker_stopping(int) override {}

 private:
  std::atomic<WorkerPool*> pool_{nullptr};
  Task task_;
  bool appeared_ = false;  // on the worker thread only
  std::atomic<bool> held_{false};
};

TEST(WorkerPool, WorkThatAppearsAsAWorkerGoesToSleepIsTaken) {
  versa::detail::Topology topology;
  WorkInTheWindow runner;
  WorkerPool pool(1, /*pin=*/false, topology, runner);
  runner.arm(pool);
  pool.notify_work();  // wakes the worker if it slept already, to search and sleep again
  EXPECT_TRUE(versa::testing::eventually([&] { return runner.ran.load() == 1; }))
      << "the worker slept with work to pull and nobody to wake it";
  pool.stop();
  EXPECT_EQ(runner.ran.load(), 1);
}

}  // namespace
