// The transfers: each an envelope, then its payload in pieces (progress_engine.hpp, "Wire
// format"); sends wait in order beyond the bound per destination, and what arrives is matched
// with the receive tasks by (handle id, version), whichever comes first.
#include <algorithm>
#include <cstring>
#include <exception>
#include <iterator>
#include <string>
#include <utility>

#include "mpi/progress_engine.hpp"
#include "versa/mpi.hpp"

namespace versa::mpi::detail {

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

}  // namespace

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

// The streams differ: a receive whose envelope has not come waits for a message that may never
// be sent.
void ProgressEngine::fail_expected_receives() {
  for (auto& [key, receive] : expected_)
    if (receive.done)
      receive.done.fail(std::make_exception_ptr(
          DivergenceError("versa::mpi: rank " + std::to_string(rank_) + " waits for " +
                          describe(key) + " from rank " + std::to_string(receive.from) +
                          ", which the ranks' different task streams do not send")));
  expected_.clear();
}

}  // namespace versa::mpi::detail
