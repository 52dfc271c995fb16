// The progress thread's life and loop: construction, what the transfer tasks post, and the
// rounds that step every procedure (the transfers in transfers.cpp, the collectives of wait_all
// in collectives.cpp, the stream probes in stream_probes.cpp, the watch in peer_watch.cpp).
#include "mpi/progress_engine.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <utility>

#include "base/timer_slack.hpp"

namespace versa::mpi::detail {

using versa::detail::MutexLock;

namespace {

int ranks_of(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

std::chrono::steady_clock::duration seconds(double value) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(value));
}

// Engines made in this process so far: the ranks make their runtimes in the same order, so the
// k-th engine of each rank shares its number, and a probe left in MPI by an earlier runtime
// (whose communicator's context a later one may reuse) is told apart.
std::atomic<std::uint64_t> engines_made{0};

}  // namespace

ProgressEngine::ProgressEngine(MPI_Comm comm, int rank, int max_in_flight,
                               double peer_timeout_seconds, std::size_t max_message_bytes)
    : comm_(comm),
      rank_(rank),
      max_in_flight_(static_cast<std::size_t>(max_in_flight)),
      max_message_bytes_(max_message_bytes),
      epoch_(engines_made.fetch_add(1, std::memory_order_relaxed)),
      ranks_(ranks_of(comm)),
      watching_(peer_timeout_seconds > 0 && ranks_of(comm) > 1),
      watched_((rank + ranks_of(comm) - 1) % ranks_of(comm)),
      watcher_((rank + 1) % ranks_of(comm)),
      peer_timeout_(seconds(peer_timeout_seconds)),
      heartbeat_period_(std::clamp(seconds(peer_timeout_seconds / 8),
                                   Clock::duration(std::chrono::milliseconds(10)),
                                   Clock::duration(std::chrono::seconds(1)))),
      thread_([this] { run(); }) {}

ProgressEngine::~ProgressEngine() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  posted_cv_.notify_all();
  thread_.join();
}

void ProgressEngine::send(int to, TransferId id, const void* data, const Layout& layout,
                          std::string failure, Completion done) {
  {
    MutexLock lock(mutex_);
    posted_.sends.push_back(
        Send{to, Envelope{id, 0, 0}, data, layout, std::move(failure), std::move(done), {}, {}});
  }
  posted_cv_.notify_one();
}

void ProgressEngine::receive(int from, TransferId id, void* data, const Layout& layout,
                             Completion done, const ReductionOps* combine) {
  {
    MutexLock lock(mutex_);
    posted_.receives.emplace_back(id, Receive{from, data, layout, std::move(done), combine});
  }
  posted_cv_.notify_one();
}

// --- Procedure: run ---------------------------------------------------------------------------

// Polls while anything is in flight; when nothing moved for a while, waits for a post in short
// steps (an envelope from another rank has no way to wake it: 100 us bounds its delay).
void ProgressEngine::run() {
  // A quiet engine polls MPI every 100 us: late wakes would delay every message that arrives.
  versa::detail::use_fine_timer_slack();
  start_watch();
  int quiet_rounds = 0;
  for (;;) {
    step_watch();
    bool moved = take_posted();
    moved |= start_sends();
    moved |= probe_envelopes();
    moved |= test_sends();
    moved |= test_incoming();
    moved |= step_stream_check();
    moved |= step_collective();
    moved |= step_probes();
    if (moved) {
      quiet_rounds = 0;
      continue;
    }
    MutexLock lock(mutex_);
    if (stop_ && idle()) {
      lock.unlock();
      stop_watch();
      return;
    }
    if (++quiet_rounds < 64) {
      lock.unlock();
      std::this_thread::yield();
      continue;
    }
    posted_cv_.wait_for(lock.native(), std::chrono::microseconds(100));
  }
}

bool ProgressEngine::idle() const {
  return sending_.empty() && arriving_.empty() && expected_.empty() && discarded_.empty() &&
         probe_sends_.empty() && !collective_running_ && !check_running_;
}

bool ProgressEngine::take_posted() {
  Posted posted;
  bool collective = false;
  bool check = false;
  {
    MutexLock lock(mutex_);
    std::swap(posted, posted_);
    // The stream check first: every rank asks for it before its allreduce_max, and collectives
    // must be issued in the same order everywhere.
    if (check_asked_ && !check_running_) {
      check_asked_ = false;
      check_send_[0] = check_hash_;
      check_send_[1] = ~check_hash_;
      check = true;
    }
    if (collective_asked_ && !collective_running_ && !check_asked_) {
      collective_asked_ = false;
      collective_send_ = std::move(collective_in_);
      collective = true;
    }
  }
  if (check) {
    MPI_Iallreduce(check_send_, check_receive_, 2, MPI_UINT64_T, MPI_MAX, comm_, &check_request_);
    check_running_ = true;
  }
  if (collective) {
    collective_receive_.assign(collective_send_.size(), 0);
    MPI_Iallreduce(collective_send_.data(), collective_receive_.data(),
                   static_cast<int>(collective_send_.size()), MPI_UINT64_T, MPI_MAX, comm_,
                   &collective_request_);
    collective_running_ = true;
  }
  for (Send& send : posted.sends) waiting_[send.to].push_back(std::move(send));
  for (auto& [key, receive] : posted.receives) match(key, std::move(receive));
  return check || collective || !posted.sends.empty() || !posted.receives.empty();
}

}  // namespace versa::mpi::detail
