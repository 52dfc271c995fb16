#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "data/handle_state.hpp"
#include "data/layout_check.hpp"
#include "mpi/runtime_access.hpp"
#include "mpi/runtime_impl.hpp"

namespace versa::mpi {

using versa::detail::RuntimeAccess;

BlockCyclic BlockCyclic::for_ranks(int ranks) {
  int rows = static_cast<int>(std::sqrt(static_cast<double>(ranks)));
  while (rows > 1 && ranks % rows != 0) --rows;
  rows = rows < 1 ? 1 : rows;
  return BlockCyclic{rows, ranks / rows};
}

namespace {
// MPI as the runtime needs it: initialized here when the program has not, at a level that lets
// the progress thread call it. Returns whether this call initialized it.
bool start_mpi() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    throw std::runtime_error(
        "versa::mpi::Runtime: MPI is finalized already (a runtime that initialized MPI "
        "finalizes it when destroyed; initialize MPI in the program to create several runtimes)");
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    if (!initialized) MPI_Finalize();
    throw std::runtime_error(
        "versa::mpi::Runtime needs MPI_THREAD_SERIALIZED (its progress thread calls MPI) or "
        "MPI_THREAD_MULTIPLE (when the program calls MPI too while the runtime lives); this MPI "
        "provides level " +
        std::to_string(provided));
  }
  return !initialized;
}
// The largest MPI message (MPI counts in int): 1 GiB, or VERSA_MPI_MESSAGE_BYTES (1 to
// INT_MAX), which networks that pipeline smaller messages better, and the tests, lower.
std::size_t max_message_bytes() {
  const char* value = std::getenv("VERSA_MPI_MESSAGE_BYTES");
  if (!value) return std::size_t{1} << 30;
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || parsed < 1 || parsed > INT_MAX)
    throw std::invalid_argument(std::string("VERSA_MPI_MESSAGE_BYTES='") + value +
                                "' is invalid: expected a number of bytes from 1 to " +
                                std::to_string(INT_MAX));
  return static_cast<std::size_t>(parsed);
}

// The file that rank `rank` of several writes in place of `path` (Config::trace_file,
// dot_file): the rank before the extension, "run.json" -> "run.rank3.json", so that the ranks do
// not write over each other and the files still open as what they are.
std::string file_of_rank(const std::string& path, int rank) {
  if (path.empty()) return path;
  std::filesystem::path file(path);
  const std::filesystem::path extension = file.extension();
  file.replace_filename(file.stem().string() + ".rank" + std::to_string(rank) + extension.string());
  return file.string();
}
}  // namespace

Runtime::Impl::~Impl() {
  engine.reset();
  MPI_Comm_free(&comm);
  if (owns_mpi) MPI_Finalize();
}

Runtime::Runtime(Config config, MPI_Comm comm) {
  // The settings first: a bad value costs nothing before MPI starts.
  config = Config::from_environment(std::move(config));
  const std::size_t message_bytes = max_message_bytes();
  const bool owns_mpi = start_mpi();
  MPI_Comm dup;
  MPI_Comm_dup(comm, &dup);
  MPI_Comm_rank(dup, &rank_);
  MPI_Comm_size(dup, &size_);
  impl_ = std::make_unique<Impl>(dup, owns_mpi, size_, rank_, config.peer_timeout_seconds,
                                 message_bytes);
  impl_->diagnostics = config.diagnostics;
  impl_->release_watch.runtime = this;
  if (config.cpu_workers == 0) config.cpu_workers = 1;
  if (size_ > 1) {
    config.label += " rank " + std::to_string(rank_);
    config.trace_file = file_of_rank(config.trace_file, rank_);
    config.dot_file = file_of_rank(config.dot_file, rank_);
  }
  local_ = RuntimeAccess::make(std::move(config));
  impl_->send_name = RuntimeAccess::intern(*local_, "mpi send");
  impl_->receive_name = RuntimeAccess::intern(*local_, "mpi receive");
  impl_->combine_name = RuntimeAccess::intern(*local_, "mpi combine");
  impl_->identity_name = RuntimeAccess::intern(*local_, "mpi identity");
  impl_->flush_name = RuntimeAccess::intern(*local_, "mpi flush");
}

// local_ goes first (its destructor waits for the transfer tasks, which need the progress
// thread), then impl_.
Runtime::~Runtime() {
  // Unless a stream check told every rank alike that the streams differ: a divergence found by
  // probes leaves the others waiting in the checks of their wait_all or their end.
  if (!impl_->engine->divergence_agreed()) {
    try {
      synchronize(true);
    } catch (const std::exception& e) {
      impl_->report("versa::mpi: rank " + std::to_string(rank_) +
                    ", ending its runtime: " + e.what());
    }
  }
  // Handles destroyed after the runtime (which a local runtime allows) have nobody to tell.
  for (std::uint32_t id = 0; id < impl_->directory.size(); ++id)
    if (versa::detail::HandleState* state = impl_->directory[id].state)
      state->set_release_observer(nullptr);
  local_.reset();
}

void Runtime::check_owner(int owner) const {
  if (owner < 0 || owner >= size_)
    throw std::invalid_argument("versa::mpi: owner rank " + std::to_string(owner) +
                                " out of range (0 to " + std::to_string(size_ - 1) + ")");
}

void* Runtime::prepare(void* data, const versa::detail::Layout& layout, int owner,
                       const std::string& name) {
  check_owner(owner);
  versa::detail::check_layout(layout, name);
  const std::size_t bytes = layout.span() * layout.element_size;
  if (data || bytes == 0) return data;
  if (owner == rank_)
    throw std::invalid_argument("versa::mpi: the owner of " +
                                (name.empty() ? std::string("a handle") : "'" + name + "'") +
                                " must give its memory");
  impl_->buffers.push_back(std::make_unique<detail::CopyBuffer>(bytes));
  return impl_->buffers.back()->data();
}

void Runtime::register_handle(versa::detail::HandleState* state, int owner, bool allocated,
                              bool zero_everywhere) {
  const std::uint32_t id =
      impl_->directory.add(state, owner, allocated ? impl_->buffers.back().get() : nullptr);
  if (zero_everywhere)
    for (int r = 0; r < size_; ++r) impl_->directory[id].valid.add(r);
  state->set_release_observer(&impl_->release_watch);
  detail::mix(impl_->stream_hash, id);
  detail::mix(impl_->stream_hash, owner);
  detail::mix(impl_->stream_hash, state->layout()->bytes());
  detail::mix(impl_->stream_hash, zero_everywhere);
  impl_->engine->stream_log().append(impl_->stream_hash);
}

void Runtime::Impl::ReleaseWatch::handle_released(versa::detail::HandleState& handle) {
  try {
    runtime->forget(handle);
  } catch (const std::exception& e) {
    runtime->impl_->report("versa::mpi: destroying handle '" + handle.name() + "': " + e.what());
  }
}

// Every rank destroys its handles at the same place of the stream (the program is the same).
// An open run of adds ends first, so that the owner's memory holds the sum when the local
// runtime retires the handle, as after a wait_all. The record then ends: left in the directory,
// a later handle at the same address would have been taken for this one, with its owner and
// versions. Memory the runtime allocated for the handle goes back at the next wait_all, when no
// task uses it any more (not while a view from acquire() on it is left open: that is a misuse
// the local runtime reports, and the view still reads the memory).
void Runtime::forget(versa::detail::HandleState& state) {
  Impl& s = *impl_;
  const std::int64_t found = s.directory.find(&state);
  if (found < 0) return;
  const auto id = static_cast<std::uint32_t>(found);
  if (s.directory[id].base >= 0) combine_adds(id);
  if (const detail::CopyBuffer* buffer = s.directory[id].buffer; buffer && state.host_views() == 0)
    s.released_buffers.push_back(buffer);
  s.directory.remove(id);
}

int Runtime::owner(const HandleBase& handle) const {
  const std::int64_t id = impl_->directory.find(versa::detail::state_of(handle));
  if (id < 0) throw std::invalid_argument("versa::mpi: a handle of another runtime");
  return impl_->directory[static_cast<std::uint32_t>(id)].owner;
}

int Runtime::holder(const HandleBase& handle) const {
  const std::int64_t id = impl_->directory.find(versa::detail::state_of(handle));
  if (id < 0) throw std::invalid_argument("versa::mpi: a handle of another runtime");
  return impl_->directory[static_cast<std::uint32_t>(id)].holder;
}

Statistics Runtime::statistics() const {
  Statistics s = impl_->counts;
  s.messages_sent = impl_->engine->messages_sent();
  s.bytes_sent = impl_->engine->bytes_sent();
  s.messages_received = impl_->engine->messages_received();
  s.bytes_received = impl_->engine->bytes_received();
  return s;
}

}  // namespace versa::mpi
