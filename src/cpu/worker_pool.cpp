#include "cpu/worker_pool.hpp"

#include <latch>

namespace versa::detail {

constinit thread_local const WorkerPool* this_thread_pool = nullptr;
constinit thread_local int this_thread_worker = -1;

namespace {
// Round-robin position of a submitting thread that is not a worker and has no submission deque.
// Per thread rather than per pool: an atomic shared by all submitters would cost a locked
// instruction per task.
thread_local std::uint32_t next_external_slot = 0;
// The submission deque index of this thread in the pool it last submitted to (WorkerPool::id_).
struct CachedSubmitter {
  std::uint64_t pool = 0;
  int index = -1;
};
thread_local CachedSubmitter this_thread_submitter;
std::atomic<std::uint64_t> next_pool_id{1};

std::uint64_t next_random(std::uint64_t& state) {
  // xorshift64*: good enough to pick victims, and one multiply.
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1DULL;
}

// Rounds of stealing attempts spent spinning, then yielding, before a worker sleeps. Spinning
// keeps wake-up latency low for fine-grained work; yielding hands the core to the submitting
// thread on oversubscribed machines.
constexpr int spin_rounds = 8;
constexpr int yield_rounds = 64;
}  // namespace

WorkerPool::WorkerPool(int count, bool pin, const Topology& topology, TaskRunner& runner,
                       bool caller_slot)
    : runner_(runner), id_(next_pool_id.fetch_add(1, std::memory_order_relaxed)), threads_(count) {
  const int slots = count + (caller_slot ? 1 : 0);
  workers_.reserve(slots);
  for (int i = 0; i < slots; ++i) {
    workers_.push_back(std::make_unique<Worker>());
    workers_.back()->rng_state = 0x9E3779B97F4A7C15ULL * (i + 1);
  }
  std::latch started(count);
  for (int i = 0; i < count; ++i)
    workers_[i]->thread = std::thread([this, i, pin, &topology, &started] {
      start(i, pin, topology);
      started.count_down();
      loop(i);
    });
  // The pool is ready when every worker is: the first tasks do not wait for thread start-up.
  started.wait();
  // The thread that makes the pool usually submits: its deque is made (and its ring touched)
  // now rather than by its first push, where a chain of a few small tasks would pay for it.
  submitter();
}

WorkerPool::~WorkerPool() { stop(); }

void WorkerPool::stop() {
  stopping_.store(true, std::memory_order_seq_cst);
  wake_epoch_.fetch_add(1, std::memory_order_seq_cst);
  wake_epoch_.notify_all();
  for (auto& worker : workers_)
    if (worker->thread.joinable()) worker->thread.join();
}

int WorkerPool::attach_caller() {
  if (threads_ == size() || this_thread_pool != nullptr) return -1;
  if (caller_attached_.exchange(true, std::memory_order_acquire)) return -1;
  this_thread_pool = this;
  this_thread_worker = threads_;
  return threads_;
}

void WorkerPool::detach_caller() {
  this_thread_pool = nullptr;
  this_thread_worker = -1;
  caller_attached_.store(false, std::memory_order_release);
  if (workers_[threads_]->deque.size_hint() != 0 || !workers_[threads_]->inbox.empty()) wake_one();
}

void WorkerPool::push_external(int submitter, Task* task) {
  if (submitter >= 0) {
    if (task->priority > 0) prioritised_submitted_.fetch_add(1, std::memory_order_relaxed);
    submission_deques_[submitter].load(std::memory_order_relaxed)->push_front(task);
    wake_one();
    return;
  }
  // Not into the caller's slot: nobody may be there to take it.
  std::uint32_t slot = next_external_slot++;
  if (slot >= static_cast<std::uint32_t>(threads_)) {
    slot = 0;
    next_external_slot = 1;
  }
  workers_[slot]->inbox.push(task);
  wake_one();
}

int WorkerPool::submitter() {
  if (this_thread_submitter.pool == id_) return this_thread_submitter.index;
  const std::thread::id self = std::this_thread::get_id();
  int index = -1;
  {
    MutexLock guard(submitters_mutex_);
    const int count = submitters_.load(std::memory_order_relaxed);
    for (int i = 0; i < count && index < 0; ++i)
      if (submitter_threads_[i] == self) index = i;
    if (index < 0 && count < max_submitters) {
      owned_deques_.push_back(std::make_unique<ReadyDeque>());
      submitter_threads_[count] = self;
      submission_deques_[count].store(owned_deques_.back().get(), std::memory_order_relaxed);
      submitters_.store(count + 1, std::memory_order_release);
      index = count;
    }
  }
  this_thread_submitter = {id_, index};
  return index;
}

// Takes a batch from a submission deque: the first task to run now, the others into the thief's
// deque, where it runs them next and other workers may steal them (one is woken). Like a list
// taken from an inbox, the batch is in no queue for a moment (see take_inbox).
Task* WorkerPool::steal_submitted(int thief) {
  const int count = submitters_.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    std::array<Task*, submitted_batch> batch;
    const std::size_t taken = submission_deques_[i]
                                  .load(std::memory_order_relaxed)
                                  ->steal_half(batch.data(), batch.size());
    if (taken == 0) continue;
    if (batch[0]->priority > 0) prioritised_submitted_.fetch_sub(1, std::memory_order_relaxed);
    if (taken > 1) {
      transferring_.fetch_add(1, std::memory_order_seq_cst);
      ReadyDeque& deque = workers_[thief]->deque;
      for (std::size_t k = taken - 1; k > 0; --k)
        deque.push_front(batch[k]);  // runs them oldest first
      transferring_.fetch_sub(1, std::memory_order_seq_cst);
      if (size() > 1) wake_one();
    }
    return batch[0];
  }
  return nullptr;
}

void WorkerPool::push_to(int worker, Task* task) {
  workers_[worker]->inbox.push(task);
  wake_one();
}

void WorkerPool::wake_sleeper() {
  if (searching_.load(std::memory_order_relaxed) > 0) return;
  if (wake_pending_.exchange(true, std::memory_order_acq_rel)) return;
  wake_epoch_.fetch_add(1, std::memory_order_release);
  wake_epoch_.notify_one();
}

bool WorkerPool::any_queued() const {
  if (transferring_.load(std::memory_order_seq_cst) != 0) return true;
  for (const auto& worker : workers_)
    if (worker->deque.size_hint() != 0 || !worker->inbox.empty()) return true;
  const int count = submitters_.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i)
    if (submission_deques_[i].load(std::memory_order_relaxed)->size_hint() != 0) return true;
  return runner_.work_to_pull();
}

Task* WorkerPool::steal(int thief) {
  // What the program submitted first: the workers' own deques hold what their tasks made ready.
  if (Task* task = steal_submitted(thief)) return task;
  const std::size_t n = workers_.size();
  if (n < 2) return nullptr;
  std::size_t victim = next_random(workers_[thief]->rng_state) % n;
  for (std::size_t k = 0; k < n; ++k, ++victim) {
    if (victim == n) victim = 0;
    if (victim == static_cast<std::size_t>(thief)) continue;
    if (Task* task = workers_[victim]->deque.pop_back()) return task;
    // A victim busy with a long task may have a full inbox it has not looked at.
    if (Task* task = take_inbox(static_cast<int>(victim), thief)) return task;
  }
  return nullptr;
}

// Moves the tasks in `worker`'s inbox to the deque of `into` and returns the first to run. A
// single task (the common case when a thread submits and workers keep up) goes straight to the
// taker. A longer list is in no queue while it is on its way (a walk over thousands of tasks, a
// millisecond or more): transferring_ makes any_queued() say so, so that no waiting caller gives
// up meanwhile, and afterwards a sleeper is woken when others may steal from the list (also one
// that went to sleep in the instant before transferring_ was raised).
Task* WorkerPool::take_inbox(int worker, int into) {
  Task* newest = workers_[worker]->inbox.take_all_newest_first();
  if (!newest || !newest->ready_next) return newest;
  transferring_.fetch_add(1, std::memory_order_seq_cst);
  ReadyDeque& deque = workers_[into]->deque;
  deque.push_list(newest);  // the oldest, pushed last, runs first
  Task* first = deque.pop_front();
  transferring_.fetch_sub(1, std::memory_order_seq_cst);
  if (first && deque.size_hint() != 0 && size() > 1) wake_one();
  return first;
}

Task* WorkerPool::find_task(int worker) {
  ReadyDeque& own = workers_[worker]->deque;
  if (prioritised_submitted() && !own.holds_prioritised()) {
    if (Task* task = steal_submitted(worker)) return task;
  }
  if (Task* task = own.pop_front()) return task;
  return find_elsewhere(worker);
}

Task* WorkerPool::find_elsewhere(int worker) {
  if (Task* task = take_inbox(worker, worker)) return task;
  if (Task* task = steal(worker)) return task;
  if (runner_.pull_work(worker)) return workers_[worker]->deque.pop_front();
  return nullptr;
}

bool WorkerPool::run_one(int worker) {
  Task* task = find_task(worker);
  if (!task) return false;
  runner_.run_task(task, worker);
  return true;
}

bool WorkerPool::run_submitted(int submitter, int worker) {
  Task* task = submission_deques_[submitter]
                   .load(std::memory_order_relaxed)
                   ->pop_bottom_beyond(submitted_batch);
  if (!task) return false;
  runner_.run_task(task, worker);
  return true;
}

void WorkerPool::caller_sleep(const std::function<bool()>& done) { sleep(&done); }

void WorkerPool::wake_all() {
  wake_epoch_.fetch_add(1, std::memory_order_release);
  wake_epoch_.notify_all();
}

void WorkerPool::sleep(const std::function<bool()>* done) {
  const std::uint32_t epoch = wake_epoch_.load(std::memory_order_acquire);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
#if !VERSA_TSAN
  fence_.heavy();
#endif
  // A pending wake-up may have been aimed at a worker that then found work without sleeping;
  // consume it here rather than sleep, or the flag would stay set and silence every later push.
  // (A flag set after `epoch` was read comes with an epoch change, which ends the wait.)
  const bool woken = wake_pending_.exchange(false, std::memory_order_acq_rel);
  if (!woken && !any_queued() && !stopping_.load(std::memory_order_seq_cst) &&
      !(done && (*done)())) {
    wake_epoch_.wait(epoch);
    wake_pending_.store(false, std::memory_order_release);
  }
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void WorkerPool::start(int index, bool pin, const Topology& topology) {
  this_thread_pool = this;
  this_thread_worker = index;
  if (pin) topology.pin_current_thread(index);
  runner_.worker_started(index);
}

void WorkerPool::loop(int index) {
  // Idle protocol: a worker without work is *searching*: it spins, then yields, stealing each
  // round, and finally sleeps. Pushers wake a sleeper only when nobody is searching (a searcher
  // will find the task), and a searcher that finds work wakes a replacement if it was the last
  // one. This keeps exactly as many workers awake as the work needs, which matters most on
  // machines where the submitting thread shares the cores with the workers.
  bool searching = false;
  int idle_rounds = 0;
  while (!stopping_.load(std::memory_order_acquire)) {
    if (Task* task = find_task(index)) {
      if (searching) {
        searching = false;
        if (searching_.fetch_sub(1, std::memory_order_acq_rel) == 1) wake_one();
      }
      idle_rounds = 0;
      runner_.run_task(task, index);
      continue;
    }
    runner_.worker_idle(index);
    if (!searching) {
      searching = true;
      searching_.fetch_add(1, std::memory_order_acq_rel);
    }
    ++idle_rounds;
    if (idle_rounds < spin_rounds) {
      for (int i = 0; i < 32; ++i) VERSA_CPU_RELAX();
    } else if (idle_rounds < spin_rounds + yield_rounds) {
      std::this_thread::yield();
    } else {
      searching = false;
      searching_.fetch_sub(1, std::memory_order_acq_rel);
      runner_.worker_sleeping(index);
      sleep();
      idle_rounds = 0;
      // Pass the wake-up on if there is more work than this worker can take.
      if (any_queued()) wake_one();
    }
  }
  if (searching) searching_.fetch_sub(1, std::memory_order_acq_rel);
  runner_.worker_stopping(index);
  this_thread_pool = nullptr;
  this_thread_worker = -1;
}

}  // namespace versa::detail
