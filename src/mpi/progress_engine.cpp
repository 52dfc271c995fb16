#include "mpi/progress_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <string>
#include <utility>

#include "versa/mpi.hpp"

namespace versa::mpi::detail {

using versa::detail::MutexLock;

namespace {

bool contiguous(const Layout& layout) { return layout.cols <= 1 || layout.ld == layout.rows; }

// Column by column between a tile with a leading dimension and a packed buffer.
void pack(std::byte* to, const void* from, const Layout& layout) {
  const std::size_t column = layout.rows * layout.element_size;
  const auto* source = static_cast<const std::byte*>(from);
  for (std::size_t j = 0; j < layout.cols; ++j)
    std::memcpy(to + j * column, source + j * layout.ld * layout.element_size, column);
}
void unpack(void* to, const std::byte* from, const Layout& layout) {
  const std::size_t column = layout.rows * layout.element_size;
  auto* target = static_cast<std::byte*>(to);
  for (std::size_t j = 0; j < layout.cols; ++j)
    std::memcpy(target + j * layout.ld * layout.element_size, from + j * column, column);
}

std::string describe(const TransferId& id) {
  std::string text =
      "handle #" + std::to_string(id.handle) + " version " + std::to_string(id.version);
  if (id.part != 0) text = "rank " + std::to_string(id.part - 1) + "'s adds to " + text;
  if (id.round != 0) text += " (after " + std::to_string(id.round) + " flushes)";
  return text;
}

// Merges a packed contribution into data with a leading dimension, column by column.
void combine_into(void* data, const std::byte* packed, const Layout& layout,
                  const ReductionOps& ops) {
  const auto& apply = ops.apply ? ops.apply : ops.merge;
  auto* target = static_cast<std::byte*>(data);
  const std::size_t column = layout.rows * layout.element_size;
  for (std::size_t j = 0; j < layout.cols; ++j)
    apply(target + j * layout.ld * layout.element_size, packed + j * column, layout.rows);
}

int ranks_of(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

std::chrono::steady_clock::duration seconds(double value) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(value));
}

// What a heartbeat's byte says.
constexpr std::uint8_t alive = 0;
constexpr std::uint8_t leaving = 1;

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

std::vector<std::uint64_t> ProgressEngine::allreduce_max(std::vector<std::uint64_t> values) {
  MutexLock lock(mutex_);
  collective_in_ = std::move(values);
  collective_asked_ = true;
  collective_done_ = false;
  posted_cv_.notify_one();
  collective_cv_.wait(lock.native(), [this]() VERSA_REQUIRES(mutex_) { return collective_done_; });
  return std::move(collective_out_);
}

// --- Procedure: run ---------------------------------------------------------------------------

// Polls while anything is in flight; when nothing moved for a while, waits for a post in short
// steps (an envelope from another rank has no way to wake it: 100 us bounds its delay).
void ProgressEngine::run() {
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

void ProgressEngine::fail_expected_receives() {
  for (auto& [key, receive] : expected_)
    if (receive.done)
      receive.done.fail(std::make_exception_ptr(
          DivergenceError("versa::mpi: rank " + std::to_string(rank_) + " waits for " +
                          describe(key) + " from rank " + std::to_string(receive.from) +
                          ", which the ranks' different task streams do not send")));
  expected_.clear();
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

// --- Procedure: watch -------------------------------------------------------------------------

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

// --- Procedure: send --------------------------------------------------------------------------

bool ProgressEngine::start_sends() {
  bool moved = false;
  for (auto& [to, queue] : waiting_) {
    std::size_t& in_flight = in_flight_[to];
    while (!queue.empty() && in_flight < max_in_flight_) {
      Send& send = sending_.emplace_back(std::move(queue.front()));
      queue.pop_front();
      ++in_flight;
      moved = true;
      const void* payload = send.data;
      std::size_t bytes = send.layout.bytes();
      if (!send.failure.empty()) {
        send.envelope.failed = 1;
        send.staging.resize(send.failure.size());
        std::memcpy(send.staging.data(), send.failure.data(), send.failure.size());
        payload = send.staging.data();
        bytes = send.staging.size();
      } else if (bytes != 0 && !contiguous(send.layout)) {
        send.staging.resize(bytes);
        pack(send.staging.data(), send.data, send.layout);
        payload = send.staging.data();
      }
      send.envelope.bytes = bytes;
      send.requests.assign(1, MPI_REQUEST_NULL);
      MPI_Isend(&send.envelope, sizeof(Envelope), MPI_BYTE, to, envelope_tag, comm_,
                &send.requests[0]);
      const auto* piece = static_cast<const std::byte*>(payload);
      for (std::size_t offset = 0; offset < bytes; offset += max_message_bytes_) {
        const std::size_t length = std::min(max_message_bytes_, bytes - offset);
        MPI_Request& request = send.requests.emplace_back(MPI_REQUEST_NULL);
        MPI_Isend(piece + offset, static_cast<int>(length), MPI_BYTE, to, data_tag, comm_,
                  &request);
      }
      messages_sent_.fetch_add(1, std::memory_order_relaxed);
      if (!send.envelope.failed) bytes_sent_.fetch_add(bytes, std::memory_order_relaxed);
    }
  }
  return moved;
}

bool ProgressEngine::test_sends() {
  bool moved = false;
  for (auto it = sending_.begin(); it != sending_.end();) {
    int done = 0;
    MPI_Testall(static_cast<int>(it->requests.size()), it->requests.data(), &done,
                MPI_STATUSES_IGNORE);
    if (!done) {
      ++it;
      continue;
    }
    --in_flight_[it->to];
    if (it->done) it->done.complete();
    it = sending_.erase(it);
    moved = true;
  }
  return moved;
}

// --- Procedure: receive -----------------------------------------------------------------------

bool ProgressEngine::probe_envelopes() {
  bool moved = false;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, envelope_tag, comm_, &flag, &status);
    if (!flag) return moved;
    Envelope envelope;
    MPI_Recv(&envelope, sizeof(Envelope), MPI_BYTE, status.MPI_SOURCE, envelope_tag, comm_,
             MPI_STATUS_IGNORE);
    on_envelope(status.MPI_SOURCE, envelope);
    moved = true;
  }
}

void ProgressEngine::on_envelope(int from, const Envelope& envelope) {
  const Key key = envelope.id;
  messages_received_.fetch_add(1, std::memory_order_relaxed);
  if (!envelope.failed) bytes_received_.fetch_add(envelope.bytes, std::memory_order_relaxed);
  auto [it, fresh] = incoming_.try_emplace(key);
  if (!fresh) {
    // The same version twice: the ranks' directories disagree. Fail whoever waits for it, and
    // take the payload aside, so that the payloads after it still match their envelopes.
    Incoming& first = it->second;
    if (first.matched && first.receive.done)
      first.receive.done.fail(std::make_exception_ptr(
          DivergenceError("versa::mpi: " + describe(key) + " arrived twice on rank " +
                          std::to_string(rank_) + ": the ranks submitted different task streams")));
    Incoming& duplicate = discarded_.emplace_back();
    duplicate.staging.resize(envelope.bytes);
    post_pieces(duplicate.staging.data(), envelope.bytes, from, duplicate.requests);
    return;
  }
  Incoming& incoming = it->second;
  incoming.from = from;
  incoming.envelope = envelope;
  if (auto waiting = expected_.find(key); waiting != expected_.end()) {
    incoming.receive = std::move(waiting->second);
    incoming.matched = true;
    expected_.erase(waiting);
  }
  post_payload_receive(key, incoming);
}

void ProgressEngine::post_payload_receive(Key key, Incoming& incoming) {
  const std::uint64_t bytes = incoming.envelope.bytes;
  if (bytes == 0) {
    incoming.arrived = true;
    if (incoming.matched) {
      finish_receive(incoming);
      incoming_.erase(key);
    }
    return;
  }
  void* target;
  if (incoming.matched && !incoming.envelope.failed && !incoming.receive.combine &&
      contiguous(incoming.receive.layout) && incoming.receive.layout.bytes() == bytes) {
    incoming.direct = true;
    target = incoming.receive.data;
  } else {
    incoming.staging.resize(bytes);
    target = incoming.staging.data();
  }
  post_pieces(target, bytes, incoming.from, incoming.requests);
  arriving_.push_back(key);
}

void ProgressEngine::post_pieces(void* payload, std::uint64_t bytes, int from,
                                 std::vector<MPI_Request>& requests) {
  auto* piece = static_cast<std::byte*>(payload);
  for (std::uint64_t offset = 0; offset < bytes; offset += max_message_bytes_) {
    const std::uint64_t length = std::min<std::uint64_t>(max_message_bytes_, bytes - offset);
    MPI_Request& request = requests.emplace_back(MPI_REQUEST_NULL);
    MPI_Irecv(piece + offset, static_cast<int>(length), MPI_BYTE, from, data_tag, comm_, &request);
  }
}

bool ProgressEngine::test_incoming() {
  bool moved = false;
  for (auto it = discarded_.begin(); it != discarded_.end();) {
    int done = 0;
    MPI_Testall(static_cast<int>(it->requests.size()), it->requests.data(), &done,
                MPI_STATUSES_IGNORE);
    it = done ? discarded_.erase(it) : std::next(it);
  }
  for (std::size_t i = 0; i < arriving_.size();) {
    auto it = incoming_.find(arriving_[i]);
    int done = 0;
    std::vector<MPI_Request>& requests = it->second.requests;
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (!done) {
      ++i;
      continue;
    }
    moved = true;
    it->second.arrived = true;
    if (it->second.matched) {
      finish_receive(it->second);
      incoming_.erase(it);
    }
    arriving_[i] = arriving_.back();
    arriving_.pop_back();
  }
  return moved;
}

// A receive task's request: its data may have arrived already (staged), be on its way, or not
// be announced yet.
void ProgressEngine::match(Key key, Receive receive) {
  auto it = incoming_.find(key);
  if (it == incoming_.end()) {
    receive.since = Clock::now();
    expected_.emplace(key, std::move(receive));
    if (diverged()) fail_expected_receives();
    return;
  }
  it->second.receive = std::move(receive);
  it->second.matched = true;
  if (!it->second.arrived) return;  // test_incoming finishes it
  finish_receive(it->second);
  incoming_.erase(it);
}

void ProgressEngine::finish_receive(Incoming& incoming) {
  Receive& receive = incoming.receive;
  const Envelope& envelope = incoming.envelope;
  if (!receive.done) return;
  if (incoming.from != receive.from) {
    receive.done.fail(std::make_exception_ptr(DivergenceError(
        "versa::mpi: " + describe(envelope.id) + " came from rank " +
        std::to_string(incoming.from) + ", rank " + std::to_string(rank_) + " expected it from " +
        std::to_string(receive.from) + ": the ranks submitted different task streams")));
    return;
  }
  if (envelope.failed) {
    const auto* text = reinterpret_cast<const char*>(incoming.staging.data());
    receive.done.fail(std::make_exception_ptr(
        RemoteFailure(incoming.from, std::string(text, incoming.staging.size()))));
    return;
  }
  if (envelope.bytes != receive.layout.bytes()) {
    receive.done.fail(std::make_exception_ptr(DivergenceError(
        "versa::mpi: " + describe(envelope.id) + " has " + std::to_string(envelope.bytes) +
        " bytes on rank " + std::to_string(incoming.from) + " and " +
        std::to_string(receive.layout.bytes()) + " on rank " + std::to_string(rank_) +
        ": the ranks registered different handles")));
    return;
  }
  if (receive.combine) {
    // The merge is the user's operator: what it throws fails the receive.
    try {
      combine_into(receive.data, incoming.staging.data(), receive.layout, *receive.combine);
    } catch (...) {
      receive.done.fail(std::current_exception());
      return;
    }
  } else if (!incoming.direct && envelope.bytes != 0) {
    if (contiguous(receive.layout))
      std::memcpy(receive.data, incoming.staging.data(), envelope.bytes);
    else
      unpack(receive.data, incoming.staging.data(), receive.layout);
  }
  receive.done.complete();
}

}  // namespace versa::mpi::detail
