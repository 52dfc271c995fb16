// The state of a versa::mpi::Runtime on one rank, shared by its source files.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/handle_host.hpp"
#include "mpi/copy_buffer.hpp"
#include "mpi/handle_directory.hpp"
#include "mpi/progress_engine.hpp"
#include "versa/mpi.hpp"

namespace versa::mpi {

namespace detail {
// FNV-1a over the bytes of `value`, folded into `hash`: the stream's fingerprint.
template <class T>
inline void mix(std::uint64_t& hash, const T& value) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
  for (std::size_t i = 0; i < sizeof(T); ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ULL;
}
inline void mix_text(std::uint64_t& hash, std::string_view text) {
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ULL;
}

}  // namespace detail

// How many sends to one destination may be in flight at once.
inline constexpr int max_sends_in_flight = 16;

struct Runtime::Impl {
  Impl(MPI_Comm communicator, bool owns, int ranks, int rank, double peer_timeout_seconds,
       std::size_t max_message_bytes)
      : comm(communicator),
        owns_mpi(owns),
        directory(ranks),
        engine(std::make_unique<detail::ProgressEngine>(comm, rank, max_sends_in_flight,
                                                        peer_timeout_seconds, max_message_bytes)) {}
  // The progress thread stops before the communicator goes (and MPI, when this runtime
  // started it).
  ~Impl();

  MPI_Comm comm;  // a duplicate of the program's: our tags never match its messages
  const bool owns_mpi;
  detail::HandleDirectory directory;
  std::vector<std::unique_ptr<detail::CopyBuffer>> buffers;  // copies the runtime allocated
  std::uint64_t stream_hash = 0xcbf29ce484222325ULL;
  Statistics counts;               // the task counts; the message counts are the engine's
  std::vector<std::uint32_t> ids;  // scratch for plan()
  const char* send_name = nullptr;
  const char* receive_name = nullptr;
  const char* combine_name = nullptr;
  const char* identity_name = nullptr;
  const char* flush_name = nullptr;
  std::function<void(const std::string&)> diagnostics;  // Config::diagnostics
  // What no call can return (an error at the runtime's end or in a handle's destructor): to
  // Config::diagnostics, or to stderr without it.
  void report(const std::string& message) const {
    if (diagnostics)
      diagnostics(message);
    else
      std::fprintf(stderr, "%s\n", message.c_str());
  }
  std::unique_ptr<detail::ProgressEngine> engine;

  // Tells the runtime of each handle the program destroys (every handle registered has it).
  // Called from the handle's destructor, so nothing may leave it: what forget throws is reported
  // as the runtime's other late errors are.
  struct ReleaseWatch final : versa::detail::HandleReleaseObserver {
    void handle_released(versa::detail::HandleState& handle) override;
    Runtime* runtime = nullptr;
  } release_watch;
  // The buffers of destroyed handles, freed at the next wait_all (their tasks are done then).
  std::vector<const detail::CopyBuffer*> released_buffers;
};

}  // namespace versa::mpi
