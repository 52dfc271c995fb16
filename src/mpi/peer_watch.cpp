// The watch: the ranks form a ring in which each sends heartbeats to the next and ends the job
// when the previous one falls silent (progress_engine.hpp, "Watch").
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "mpi/progress_engine.hpp"

namespace versa::mpi::detail {

namespace {

// What a heartbeat's byte says.
constexpr std::uint8_t alive = 0;
constexpr std::uint8_t leaving = 1;

}  // namespace

void ProgressEngine::start_watch() {
  if (!watching_) return;
  last_heard_ = Clock::now();
  next_heartbeat_ = last_heard_;
  MPI_Irecv(&heartbeat_in_, 1, MPI_BYTE, watched_, heartbeat_tag, comm_, &heartbeat_receive_);
}

void ProgressEngine::step_watch() {
  if (!watching_) return;
  const Clock::time_point now = Clock::now();
  if (now >= next_heartbeat_) {
    int sent = 1;
    if (heartbeat_send_ != MPI_REQUEST_NULL) MPI_Test(&heartbeat_send_, &sent, MPI_STATUS_IGNORE);
    if (sent) MPI_Isend(&alive, 1, MPI_BYTE, watcher_, heartbeat_tag, comm_, &heartbeat_send_);
    next_heartbeat_ = now + heartbeat_period_;
  }
  hear_watched(now);
}

// Heartbeats queued while this thread did not run count: they are taken before the silence is
// measured.
void ProgressEngine::hear_watched(Clock::time_point now) {
  while (!watched_left_) {
    int heard = 0;
    MPI_Test(&heartbeat_receive_, &heard, MPI_STATUS_IGNORE);
    if (!heard) break;
    last_heard_ = now;
    if (heartbeat_in_ == leaving)
      watched_left_ = true;
    else
      MPI_Irecv(&heartbeat_in_, 1, MPI_BYTE, watched_, heartbeat_tag, comm_, &heartbeat_receive_);
  }
  if (!watched_left_ && now - last_heard_ > peer_timeout_) abort_for_silent_peer(now - last_heard_);
}

// The last heartbeat says the rank leaves, so that its watcher, which may run longer, does not
// take the silence that follows for a death. Then it hears the watched rank out until that one
// leaves too: a heartbeat never received would stay in MPI after the communicator is freed, and
// Open MPI may deliver it to a later communicator that reuses the freed one's context id.
void ProgressEngine::stop_watch() {
  if (!watching_) return;
  MPI_Wait(&heartbeat_send_, MPI_STATUS_IGNORE);  // one byte: sent eagerly, never waits long
  MPI_Send(&leaving, 1, MPI_BYTE, watcher_, heartbeat_tag, comm_);
  while (!watched_left_) {
    hear_watched(Clock::now());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}
// MPI cannot go on without a rank (a collective would never end), and no call of this rank's
// program is waiting that could be given the error: end the job, saying which rank went silent.
void ProgressEngine::abort_for_silent_peer(Clock::duration silence) {
  const double waited = std::chrono::duration<double>(silence).count();
  std::fprintf(stderr,
               "versa::mpi: rank %d has heard nothing from rank %d for %.1f s (heartbeats are "
               "due every %.2f s): rank %d died or stopped; aborting the job "
               "(Config::peer_timeout_seconds, VERSA_PEER_TIMEOUT)\n",
               rank_, watched_, waited, std::chrono::duration<double>(heartbeat_period_).count(),
               watched_);
  std::fflush(stderr);
  MPI_Abort(comm_, 1);
  std::abort();  // MPI_Abort does not return; this says so to the compiler
}

}  // namespace versa::mpi::detail
