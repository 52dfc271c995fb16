// The two collectives of wait_all, issued by the progress thread in the same order on every
// rank (take_posted): the stream check, which compares the ranks' submitted streams, and the
// element-wise maximum that wait_all agrees on.
#include <utility>

#include "mpi/progress_engine.hpp"

namespace versa::mpi::detail {

using versa::detail::MutexLock;

std::vector<std::uint64_t> ProgressEngine::allreduce_max(std::vector<std::uint64_t> values) {
  MutexLock lock(mutex_);
  collective_in_ = std::move(values);
  collective_asked_ = true;
  collective_done_ = false;
  posted_cv_.notify_one();
  collective_cv_.wait(lock.native(), [this]() VERSA_REQUIRES(mutex_) { return collective_done_; });
  return std::move(collective_out_);
}

void ProgressEngine::check_stream(std::uint64_t stream_hash) {
  {
    MutexLock lock(mutex_);
    check_hash_ = stream_hash;
    check_asked_ = true;
  }
  posted_cv_.notify_one();
}

// Equal hashes: the maximum of the hash and of its complement are both the rank's own.
bool ProgressEngine::step_stream_check() {
  if (!check_running_) return false;
  int done = 0;
  MPI_Test(&check_request_, &done, MPI_STATUS_IGNORE);
  if (!done) return false;
  check_running_ = false;
  if (check_receive_[0] != check_send_[0] || check_receive_[1] != check_send_[1]) {
    divergence_agreed_.store(true, std::memory_order_release);
    diverged_.store(true, std::memory_order_release);
    fail_expected_receives();
  }
  return true;
}

// Reported after the stream check asked before it, so that its caller sees diverged() settled.
bool ProgressEngine::step_collective() {
  if (!collective_running_ || check_running_) return false;
  int done = 0;
  MPI_Test(&collective_request_, &done, MPI_STATUS_IGNORE);
  if (!done) return false;
  collective_running_ = false;
  {
    MutexLock lock(mutex_);
    collective_out_ = std::move(collective_receive_);
    collective_done_ = true;
  }
  collective_cv_.notify_all();
  return true;
}

}  // namespace versa::mpi::detail
