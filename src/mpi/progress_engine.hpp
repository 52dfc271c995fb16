// The one thread of a rank that calls MPI (docs/distributed.md, "Protocol"). Transfer tasks
// hand it sends and receives with a Completion and return; it issues nonblocking MPI
// operations, matches what arrives by (handle id, version) and completes the tasks when their
// transfer is done, so that no worker ever blocks in MPI (with one worker per rank, a worker
// blocked in MPI_Wait would deadlock the rank).
//
// A dedicated thread rather than progress inside idle workers: MPI is then called from one
// thread only (MPI_THREAD_SERIALIZED suffices), progress does not stop while every worker runs
// long kernels, and the workers' idle protocol stays the core's. It polls while transfers are
// pending and sleeps in short steps otherwise.
//
// Wire format: each transfer is an Envelope on envelope_tag, then, when it has a payload, the
// payload on data_tag, in pieces of at most `max_message_bytes` (MPI counts in int, so a payload
// over 2 GiB takes several messages). MPI keeps messages of one sender and tag in order, and a
// payload's pieces are posted one after the other on both sides, so the k-th payload from a rank
// belongs to the k-th envelope with a payload from that rank: the receiver posts the payload's
// receives when the envelope arrives, into the replica when its receive task is already waiting
// (and the layout is contiguous), else into a staging buffer.
//
// Watch: the ranks form a ring in which each tells the next, on heartbeat_tag, that it is alive
// (one byte a few times per timeout; one send in flight at most) and watches the previous one.
// A ring rather than all to all: each rank sends and hears one heartbeat per period whatever
// the number of ranks, and one silent rank is enough to end the job. Without the watch, a rank
// killed under a launcher that lets the others run would leave them waiting for its messages
// for ever.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "mpi/stream_log.hpp"
#include "versa/completion.hpp"
#include "versa/detail/task_glue.hpp"
#include "versa/reduction.hpp"

namespace versa::mpi::detail {

using versa::detail::Layout;
using versa::detail::ReductionOps;

// Fixed tags: never one per message (MPI_TAG_UB may be as small as 32767).
inline constexpr int envelope_tag = 1501;
inline constexpr int data_tag = 1502;
inline constexpr int heartbeat_tag = 1503;
inline constexpr int probe_tag = 1504;

// What a message carries: a version of a handle, or, with `part` p > 0, the contribution of
// rank p - 1's add accesses to that version (docs/distributed.md, "Reductions across ranks").
// `round` counts the handle's flushes: after one, a rank may receive a version again. A rank
// receives each at most once, so it names one message.
struct TransferId {
  std::uint64_t handle;  // global id
  std::uint64_t version;
  std::uint32_t part = 0;
  std::uint32_t round = 0;
  bool operator==(const TransferId&) const = default;
};

struct Envelope {
  TransferId id;
  std::uint64_t bytes;   // payload bytes following on data_tag; 0: none
  std::uint64_t failed;  // 1: the data was spoilt by a failure; the payload is its message
};

// A stream probe: a rank's position in its submitted stream and its fingerprint there, asking
// whether the receiver's stream agrees (ask), answering one (answer), or telling that the
// streams differ (diverged). `epoch` tells this runtime's probes from a stale one's.
struct Probe {
  enum Kind : std::uint64_t { ask, answer, diverged };
  std::uint64_t epoch;
  std::uint64_t count;
  std::uint64_t hash;
  Kind kind;
};

class ProgressEngine {
 public:
  // At most `max_in_flight` sends per destination at once; more wait in order. A rank that
  // hears nothing from the previous rank of the ring for `peer_timeout_seconds` aborts the job
  // (0: no watch). Collective (every rank of `comm` makes one, at about the same time).
  // A payload goes in messages of at most `max_message_bytes` (1 to INT_MAX) each.
  ProgressEngine(MPI_Comm comm, int rank, int max_in_flight, double peer_timeout_seconds,
                 std::size_t max_message_bytes);
  ~ProgressEngine();
  ProgressEngine(const ProgressEngine&) = delete;
  ProgressEngine& operator=(const ProgressEngine&) = delete;

  // Sends `id` (its data at `data`, of `layout`) to rank `to`, or, when `failure` is not
  // empty, the news that it was spoilt. `done` is completed when MPI has sent it. Any thread.
  void send(int to, TransferId id, const void* data, const Layout& layout, std::string failure,
            Completion done);
  // Receives `id` from rank `from` into `data`, or, with `combine`, merges it into `data` with
  // that operator; `done` is completed when it is there, failed (RemoteFailure) when the
  // sender's data was spoilt. Any thread.
  void receive(int from, TransferId id, void* data, const Layout& layout, Completion done,
               const ReductionOps* combine = nullptr);
  // The element-wise maximum of `values` over all ranks (a collective: every rank calls it).
  // Blocks the caller; not from a worker.
  std::vector<std::uint64_t> allreduce_max(std::vector<std::uint64_t> values);
  // Compares `stream_hash` across the ranks in the background (a collective, issued before any
  // allreduce_max asked after it). When the ranks differ, the receives that wait for a message
  // that has not come, and every later one, fail with DivergenceError: a rank whose peer
  // diverged does not wait for a message that will never be sent. Any thread.
  void check_stream(std::uint64_t stream_hash);
  // Whether the ranks' streams were found different (then for good): by a stream check, or by
  // stream probes while a receive waited.
  bool diverged() const { return diverged_.load(std::memory_order_acquire); }
  // Whether a stream check (a collective, so every rank alike) found them different.
  bool divergence_agreed() const { return divergence_agreed_.load(std::memory_order_acquire); }
  // The fingerprints of this rank's submitted stream, which the submitting thread appends to
  // and the stream probes read.
  StreamLog& stream_log() { return stream_log_; }

  std::uint64_t messages_sent() const { return messages_sent_.load(std::memory_order_relaxed); }
  std::uint64_t bytes_sent() const { return bytes_sent_.load(std::memory_order_relaxed); }
  std::uint64_t messages_received() const {
    return messages_received_.load(std::memory_order_relaxed);
  }
  std::uint64_t bytes_received() const { return bytes_received_.load(std::memory_order_relaxed); }

 private:
  using Key = TransferId;
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>()((k.handle * 0x9e3779b97f4a7c15ULL ^ k.version) *
                                            0x9e3779b97f4a7c15ULL ^
                                        (std::uint64_t{k.part} << 32 | k.round));
    }
  };
  struct Send {
    int to;
    Envelope envelope;
    const void* data;
    Layout layout;
    std::string failure;
    Completion done;
    std::vector<std::byte> staging;     // packed data or the failure's message
    std::vector<MPI_Request> requests;  // the envelope's, then the payload's pieces'
  };
  struct Receive {
    int from;
    void* data;
    Layout layout;
    Completion done;
    const ReductionOps* combine;                       // null: the data replaces `data`
    std::chrono::steady_clock::time_point since = {};  // when it started to wait (expected_)
  };
  struct Incoming {
    int from;
    Envelope envelope;
    std::vector<std::byte> staging;
    bool direct = false;  // received straight into the receive's replica
    bool arrived = false;
    std::vector<MPI_Request> requests;  // the payload's pieces
    bool matched = false;               // `receive` is set
    Receive receive;
  };
  // Posted by the transfer tasks and wait_all, taken by the progress thread.
  struct Posted {
    std::vector<Send> sends;
    std::vector<std::pair<Key, Receive>> receives;
  };

  // The loop and what it takes from the posting threads (progress_engine.cpp).
  void run();
  bool take_posted();
  bool idle() const;
  // The transfers (transfers.cpp).
  bool start_sends();
  bool test_sends();
  bool probe_envelopes();
  bool test_incoming();
  void on_envelope(int from, const Envelope& envelope);
  void post_payload_receive(Key key, Incoming& incoming);
  void post_pieces(void* payload, std::uint64_t bytes, int from,
                   std::vector<MPI_Request>& requests);
  void match(Key key, Receive receive);
  void finish_receive(Incoming& incoming);
  void fail_expected_receives();
  // The collectives of wait_all (collectives.cpp).
  bool step_collective();
  bool step_stream_check();
  // Stream probes (stream_probes.cpp): asks the other ranks when a receive has waited long,
  // answers their asks, and hears that the streams differ.
  bool step_probes();
  void on_probe(int from, const Probe& probe);
  void send_probe(int to, Probe::Kind kind, std::uint64_t count, std::uint64_t hash);
  // The streams differ: fails the waiting receives and tells every other rank.
  void diverge_and_tell();
  // The watch (peer_watch.cpp).
  void start_watch();
  void step_watch();
  void hear_watched(std::chrono::steady_clock::time_point now);
  void stop_watch();
  [[noreturn]] void abort_for_silent_peer(std::chrono::steady_clock::duration silence);

  const MPI_Comm comm_;
  const int rank_;
  const std::size_t max_in_flight_;
  const std::size_t max_message_bytes_;

  versa::detail::Mutex mutex_;
  std::condition_variable posted_cv_;      // something was posted, or stop
  std::condition_variable collective_cv_;  // the collective finished
  Posted posted_ VERSA_GUARDED_BY(mutex_);
  bool stop_ VERSA_GUARDED_BY(mutex_) = false;
  // The collective asked for by wait_all, and its result.
  std::vector<std::uint64_t> collective_in_ VERSA_GUARDED_BY(mutex_);
  std::vector<std::uint64_t> collective_out_ VERSA_GUARDED_BY(mutex_);
  bool collective_asked_ VERSA_GUARDED_BY(mutex_) = false;
  bool collective_done_ VERSA_GUARDED_BY(mutex_) = false;
  // The collective in progress: the progress thread's (MPI writes the buffers meanwhile).
  bool collective_running_ = false;
  std::vector<std::uint64_t> collective_send_;
  std::vector<std::uint64_t> collective_receive_;
  MPI_Request collective_request_ = MPI_REQUEST_NULL;
  // The stream check asked for by wait_all, and the one in progress.
  std::uint64_t check_hash_ VERSA_GUARDED_BY(mutex_) = 0;
  bool check_asked_ VERSA_GUARDED_BY(mutex_) = false;
  bool check_running_ = false;
  std::uint64_t check_send_[2] = {0, 0};
  std::uint64_t check_receive_[2] = {0, 0};
  MPI_Request check_request_ = MPI_REQUEST_NULL;
  std::atomic<bool> diverged_{false};
  std::atomic<bool> divergence_agreed_{false};
  StreamLog stream_log_;

  // The progress thread's own state.
  std::unordered_map<int, std::deque<Send>> waiting_;    // per destination, beyond the bound
  std::unordered_map<int, std::size_t> in_flight_;       // sends started per destination
  std::list<Send> sending_;                              // started; stable addresses for MPI
  std::unordered_map<Key, Receive, KeyHash> expected_;   // receives whose envelope is not here
  std::unordered_map<Key, Incoming, KeyHash> incoming_;  // envelopes here, receive or not
  std::vector<Key> arriving_;                            // incoming_ with a payload in flight
  std::list<Incoming> discarded_;  // duplicates (divergent ranks): received, then dropped

  // Stream probes (the progress thread's): this runtime's number among the process's, the
  // probes being sent, and when the next ask may go.
  const std::uint64_t epoch_;
  const int ranks_;
  struct ProbeSend {
    Probe probe;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::list<ProbeSend> probe_sends_;
  std::chrono::steady_clock::time_point next_ask_ = {};

  // The watch (the progress thread's): the previous rank of the ring, watched, and the next,
  // told. A heartbeat's byte says whether its sender goes on or is leaving (its runtime ends).
  using Clock = std::chrono::steady_clock;
  const bool watching_;
  const int watched_;
  const int watcher_;
  const Clock::duration peer_timeout_;
  const Clock::duration heartbeat_period_;
  Clock::time_point next_heartbeat_;
  Clock::time_point last_heard_;
  bool watched_left_ = false;
  std::uint8_t heartbeat_in_ = 0;
  MPI_Request heartbeat_send_ = MPI_REQUEST_NULL;
  MPI_Request heartbeat_receive_ = MPI_REQUEST_NULL;

  // Written by the progress thread, read by statistics(): relaxed, they are counts.
  std::atomic<std::uint64_t> messages_sent_{0};
  std::atomic<std::uint64_t> bytes_sent_{0};
  std::atomic<std::uint64_t> messages_received_{0};
  std::atomic<std::uint64_t> bytes_received_{0};

  std::thread thread_;  // last: it runs on the members above
};

}  // namespace versa::mpi::detail
