// Stream probes: the ranks' streams compared point to point while a receive waits long, for
// the divergences that wait outside wait_all (docs/distributed.md).
#include <algorithm>
#include <chrono>
#include <iterator>

#include "mpi/progress_engine.hpp"

namespace versa::mpi::detail {

namespace {
// A receive that waits this long has the ranks' streams compared by probes, and again as often
// while it waits. Long enough that a rank only slower than its peers costs a few small messages.
constexpr std::chrono::milliseconds probe_after{500};
}  // namespace

// The stream check of wait_all needs every rank there; a rank whose receive waits for a message
// that the others' streams never send may be waiting elsewhere (an acquire on the local
// runtime), or the others may be in wait_all, or ending, while it waits: then nobody reaches the
// check. So a receive that waits long has this rank ask every other one, point to point, whether
// its stream agrees at this rank's position; a rank at or past that position compares its own
// fingerprint there, a rank behind answers with its position, which the asker compares the same
// way. wait_all and the end are events of the stream, so a rank waiting there disagrees with
// one that submitted something else at that position. The first rank to see a difference tells
// every other one, and each fails its waiting receives, as the stream check does.
bool ProgressEngine::step_probes() {
  bool moved = false;
  for (auto it = probe_sends_.begin(); it != probe_sends_.end();) {
    int done = 0;
    MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
    it = done ? probe_sends_.erase(it) : std::next(it);
  }
  for (;;) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, probe_tag, comm_, &flag, &status);
    if (!flag) break;
    Probe probe;
    MPI_Recv(&probe, sizeof(Probe), MPI_BYTE, status.MPI_SOURCE, probe_tag, comm_,
             MPI_STATUS_IGNORE);
    if (probe.epoch == epoch_) on_probe(status.MPI_SOURCE, probe);
    moved = true;
  }
  if (diverged() || expected_.empty() || ranks_ < 2) return moved;
  const auto now = Clock::now();
  if (now < next_ask_) return moved;
  auto oldest = now;
  for (const auto& waiting : expected_) oldest = std::min(oldest, waiting.second.since);
  if (now - oldest < probe_after) return moved;
  next_ask_ = now + probe_after;
  const std::uint64_t count = stream_log_.count();
  std::uint64_t hash = 0;
  if (count == 0 || !stream_log_.fingerprint(count, hash)) return moved;
  for (int to = 0; to < ranks_; ++to)
    if (to != rank_) send_probe(to, Probe::ask, count, hash);
  return true;
}

void ProgressEngine::on_probe(int from, const Probe& probe) {
  if (probe.kind == Probe::diverged) {
    if (!diverged()) {
      diverged_.store(true, std::memory_order_release);
      fail_expected_receives();
    }
    return;
  }
  if (diverged()) return;
  const std::uint64_t mine = stream_log_.count();
  std::uint64_t hash = 0;
  if (mine >= probe.count) {
    if (stream_log_.fingerprint(probe.count, hash) && hash != probe.hash) diverge_and_tell();
  } else if (probe.kind == Probe::ask && mine > 0 && stream_log_.fingerprint(mine, hash)) {
    send_probe(from, Probe::answer, mine, hash);
  }
}

void ProgressEngine::send_probe(int to, Probe::Kind kind, std::uint64_t count, std::uint64_t hash) {
  ProbeSend& send = probe_sends_.emplace_back();
  send.probe = Probe{epoch_, count, hash, kind};
  MPI_Isend(&send.probe, sizeof(Probe), MPI_BYTE, to, probe_tag, comm_, &send.request);
}

void ProgressEngine::diverge_and_tell() {
  diverged_.store(true, std::memory_order_release);
  fail_expected_receives();
  for (int to = 0; to < ranks_; ++to)
    if (to != rank_) send_probe(to, Probe::diverged, 0, 0);
}

}  // namespace versa::mpi::detail
