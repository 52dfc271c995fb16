// The owner-computes rule (docs/distributed.md): every rank applies each submitted task to its
// copy of the handle directory, which says where the task runs and which versions must move;
// the rank issues the transfers it takes part in and runs the task if it is its executor.
// Also the collective end of a phase, wait_all.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "base/failure.hpp"
#include "base/names.hpp"
#include "data/handle_state.hpp"
#include "mpi/runtime_access.hpp"
#include "mpi/runtime_impl.hpp"
#include "versa/completion.hpp"
#include "versa/error.hpp"

namespace versa::mpi {

namespace {

using versa::detail::AccessRecord;
using versa::detail::HandleState;
using versa::detail::Layout;
using versa::detail::RuntimeAccess;
using versa::detail::TaskDesc;

// The mode of a send task's access: it neither reads (so a failure before it does not cancel
// it: it must still tell the receiver, or the receiver would wait forever) nor writes, and the
// sends of one version to several ranks form one run that runs at once.
constexpr AccessType send_access{
    .reads = false, .writes = false, .reorderable = true, .exclusive = false, .group = 7};

struct TransferClosure {
  detail::ProgressEngine* engine;
  int peer;
  int rank;  // this rank, for the failure's message
  detail::TransferId id;
};

void invoke_send(void* closure, const AccessRecord* accesses) {
  const auto& c = *static_cast<const TransferClosure*>(closure);
  const AccessRecord& access = accesses[0];
  std::string failure;
  // The version this send carries is the handle's current one (later writers wait for the
  // send), so a poison now is one of that version.
  if (auto poison = access.handle->poison_before(UINT64_MAX))
    failure = "task '" + poison->task_name + "' failed on rank " + std::to_string(c.rank) + ": " +
              poison->message;
  else if (!access.data && access.layout->bytes() != 0)  // a failed copy home (not a token)
    failure = "copying " + versa::detail::quoted_handle(access.handle->name()) +
              " to the host failed on rank " + std::to_string(c.rank);
  c.engine->send(c.peer, c.id, access.data, *access.layout, std::move(failure), versa::detach());
}

void invoke_receive(void* closure, const AccessRecord* accesses) {
  const auto& c = *static_cast<const TransferClosure*>(closure);
  c.engine->receive(c.peer, c.id, accesses[0].data, *accesses[0].layout, versa::detach());
}

// Merges another rank's adds into this rank's copy.
void invoke_combine(void* closure, const AccessRecord* accesses) {
  const auto& c = *static_cast<const TransferClosure*>(closure);
  c.engine->receive(c.peer, c.id, accesses[0].data, *accesses[0].layout, versa::detach(),
                    accesses[0].handle->reduction());
}

// Sets this rank's copy to the reduction's identity: its adds then make its contribution.
void invoke_identity(void*, const AccessRecord* accesses) {
  const Layout& layout = *accesses[0].layout;
  auto* data = static_cast<std::byte*>(accesses[0].data);
  for (std::size_t j = 0; j < layout.cols; ++j)
    accesses[0].handle->reduction()->identity(data + j * layout.ld * layout.element_size,
                                              layout.rows);
}

struct NoClosure {};

// Gives back the pages of this rank's copy (flush).
struct DiscardClosure {
  const detail::CopyBuffer* buffer;
};

// Only when the copy is in the buffer: where a receive was renamed (it found readers of the
// version before pending), the data is in a buffer of the local runtime's renaming, and the
// buffer may still be read by those readers; it is given back at a later flush.
void invoke_discard(void* closure, const AccessRecord* accesses) {
  const detail::CopyBuffer& buffer = *static_cast<const DiscardClosure*>(closure)->buffer;
  // Page-locked pages stay (CopyBuffer::release): they cost memory, nothing else.
  if (accesses[0].data == buffer.data() && !accesses[0].handle->host_pins()) buffer.release();
}

// A task of the layer's own on the local runtime (a transfer, or one that prepares or discards
// a copy), with a body of its own (no user's typed body) and a trivially copyable closure.
template <class Closure>
void submit_local(versa::Runtime& local, const char* name, versa::detail::InvokeFn invoke,
                  Closure closure, HandleState* handle, AccessMode mode) {
  AccessRecord record;
  record.handle = handle;
  record.mode = mode;
  TaskDesc desc;
  desc.name = name;
  desc.type_name = name;
  desc.priority = 1;  // before computations: another rank waits for it
  desc.accesses = &record;
  desc.access_count = 1;
  desc.invoke = invoke;
  desc.invoke_cuda = nullptr;
  desc.cuda_left_out = false;
  desc.invoke_emulated = nullptr;
  desc.placement = Placement::cpu_only;
  desc.reduction = nullptr;
  desc.closure = &closure;
  desc.closure_size = sizeof(closure);
  desc.closure_align = alignof(Closure);
  desc.move = [](void* to, void* from) { std::memcpy(to, from, sizeof(Closure)); };
  desc.destroy = nullptr;
  desc.is_child = false;
  desc.work = -1;
  desc.work_hint = nullptr;
  // A send whose data could not be copied home still tells its receiver.
  desc.runs_after_failed_copy = invoke == &invoke_send;
  RuntimeAccess::submit(local, desc);
}

// --- Procedure: plan --------------------------------------------------------------------------

// Checks and identifies the accesses exactly as every rank does, so that a bad task is refused
// on every rank alike, before anything is recorded.
void check_task(std::string_view name, const detail::RemoteAccess* accesses, std::size_t count,
                int executor, int ranks, const detail::HandleDirectory& directory,
                std::vector<std::uint32_t>& ids) {
  const std::string task = "versa::mpi: task '" + std::string(name) + "'";
  if (executor < -1 || executor >= ranks)
    throw std::invalid_argument(task + ": on_rank(" + std::to_string(executor) +
                                ") is out of range (0 to " + std::to_string(ranks - 1) + ")");
  ids.clear();
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t id = directory.find(accesses[i].handle);
    if (id < 0)
      throw std::invalid_argument(task + ": access " + std::to_string(i + 1) +
                                  " is to a handle not registered with this distributed runtime");
    const AccessMode mode = accesses[i].mode;
    if (mode != AccessMode::add && is_unordered(mode) && !needs_exclusive(mode) && modifies(mode))
      throw std::invalid_argument(task + ": " + to_string(mode) +
                                  " accesses (user-defined reductions) are not supported on a "
                                  "distributed runtime; use add");
    if (mode == AccessMode::add && !accesses[i].handle->reduction())
      throw std::invalid_argument(task + ": access " + std::to_string(i + 1) +
                                  " is an add to a handle with no reduction operator "
                                  "(set_reduction)");
    for (std::uint32_t earlier : ids)
      if (earlier == static_cast<std::uint32_t>(id))
        throw std::invalid_argument(task + " accesses a handle twice");
    ids.push_back(static_cast<std::uint32_t>(id));
  }
}

}  // namespace

bool Runtime::plan(std::string_view name, const detail::RemoteAccess* accesses, std::size_t count,
                   int executor) {
  Impl& s = *impl_;
  check_task(name, accesses, count, executor, size_, s.directory, s.ids);
  // The executor: on_rank, else the owner of the first handle modified, else of the first one.
  if (executor < 0) {
    for (std::size_t i = 0; i < count && executor < 0; ++i)
      if (modifies(accesses[i].mode)) executor = s.directory[s.ids[i]].owner;
    if (executor < 0) executor = count ? s.directory[s.ids[0]].owner : 0;
  }
  detail::mix_text(s.stream_hash, name);
  detail::mix(s.stream_hash, executor);
  bool involved = executor == rank_;
  for (std::size_t i = 0; i < count; ++i) {
    detail::mix(s.stream_hash, s.ids[i]);
    detail::mix(s.stream_hash, accesses[i].mode);
    detail::HandleRecord& record = s.directory[s.ids[i]];
    if (accesses[i].mode == AccessMode::add) {
      involved |= join_adds(s.ids[i], executor);
      continue;
    }
    // Any other access ends a run of adds: the contributions meet at the owner first.
    if (record.base >= 0) involved |= combine_adds(s.ids[i]);
    // An input the executor lacks comes from the holder of its latest version, once.
    if (!reads_contents(accesses[i].mode) || record.valid.has(executor)) continue;
    involved |= transfer(s.ids[i], record.holder, executor);
    record.valid.add(executor);
  }
  // What it modifies, it holds alone, one version later; the other copies are stale. (Adds
  // make their version when their run ends.)
  for (std::size_t i = 0; i < count; ++i) {
    if (!modifies(accesses[i].mode) || accesses[i].mode == AccessMode::add) continue;
    detail::HandleRecord& record = s.directory[s.ids[i]];
    ++record.version;
    record.holder = executor;
    record.valid.reset_to(executor);
  }
  s.engine->stream_log().append(s.stream_hash);
  ++s.counts.tasks_submitted;
  if (executor == rank_) ++s.counts.tasks_executed;
  if (!involved) ++s.counts.tasks_pruned;
  return executor == rank_;
}

// Issues this rank's part of moving the latest version of handle `id` from `from` to `to`.
bool Runtime::transfer(std::uint32_t id, int from, int to) {
  Impl& s = *impl_;
  if (rank_ != from && rank_ != to) return false;
  detail::HandleRecord& record = s.directory[id];
  const TransferClosure closure{
      s.engine.get(), rank_ == from ? to : from, rank_, {id, record.version, 0, record.flushes}};
  if (rank_ == from)
    submit_local(*local_, s.send_name, invoke_send, closure, record.state, send_access.mode());
  else
    submit_local(*local_, s.receive_name, invoke_receive, closure, record.state,
                 AccessMode::write_only);
  return true;
}

// --- Procedure: reductions across ranks -------------------------------------------------------

// An add by `executor` to handle `id`. A run of adds starts where the value before it is: on the
// owner when its copy is valid (then nothing moves for it), else on the holder. There the adds
// accumulate on that value; on any other rank they accumulate on a copy first set to the
// identity, which makes the rank's contribution.
bool Runtime::join_adds(std::uint32_t id, int executor) {
  Impl& s = *impl_;
  detail::HandleRecord& record = s.directory[id];
  if (record.base < 0) {
    record.base = record.valid.has(record.owner) ? record.owner : record.holder;
    record.contributors.clear();
  }
  if (record.contributors.has(executor)) return false;
  record.contributors.add(executor);
  if (executor == record.base) return false;
  if (rank_ == executor)
    submit_local(*local_, s.identity_name, invoke_identity, NoClosure{}, record.state,
                 AccessMode::write_only);
  return rank_ == executor;
}

// Ends the run of adds on handle `id`: the owner merges every other taking part (the base and
// the contributors) into its copy, in rank order, which makes the next version, held by the
// owner alone. One message per rank taking part besides the owner.
bool Runtime::combine_adds(std::uint32_t id) {
  Impl& s = *impl_;
  detail::HandleRecord& record = s.directory[id];
  const int owner = record.owner;
  const std::uint64_t version = record.version + 1;
  bool involved = false;
  if (rank_ == owner && owner != record.base && !record.contributors.has(owner)) {
    submit_local(*local_, s.identity_name, invoke_identity, NoClosure{}, record.state,
                 AccessMode::write_only);
    involved = true;
  }
  for (int r = 0; r < size_; ++r) {
    if (r == owner || (r != record.base && !record.contributors.has(r))) continue;
    const detail::TransferId part{id, version, static_cast<std::uint32_t>(r + 1), record.flushes};
    if (rank_ == r) {
      submit_local(*local_, s.send_name, invoke_send,
                   TransferClosure{s.engine.get(), owner, rank_, part}, record.state,
                   send_access.mode());
      involved = true;
    } else if (rank_ == owner) {
      submit_local(*local_, s.combine_name, invoke_combine,
                   TransferClosure{s.engine.get(), r, rank_, part}, record.state,
                   AccessMode::write);
      involved = true;
    }
  }
  record.version = version;
  record.holder = owner;
  record.valid.reset_to(owner);
  record.base = -1;
  return involved;
}

// Ends every open run of adds (wait_all: the values are then at their owners).
void Runtime::combine_open_adds() {
  Impl& s = *impl_;
  for (std::uint32_t id = 0; id < s.directory.size(); ++id)
    if (s.directory[id].base >= 0) combine_adds(id);
}

// --- Procedure: flush --------------------------------------------------------------------------

detail::HandleRecord& Runtime::start_procedure(const HandleBase& handle, const char* procedure) {
  Impl& s = *impl_;
  const std::int64_t found = s.directory.find(versa::detail::state_of(handle));
  if (found < 0)
    throw std::invalid_argument(std::string("versa::mpi: ") + procedure +
                                " of a handle not registered with this distributed runtime");
  const auto id = static_cast<std::uint32_t>(found);
  detail::mix_text(s.stream_hash, procedure);
  detail::mix(s.stream_hash, id);
  s.engine->stream_log().append(s.stream_hash);
  if (s.directory[id].base >= 0) combine_adds(id);
  return s.directory[id];
}

void Runtime::flush(const HandleBase& handle) {
  detail::HandleRecord& record = start_procedure(handle, "flush");
  record.valid.reset_to(record.holder);
  ++record.flushes;
  // After this rank's earlier tasks on the copy; its content is stale from now on, whatever it
  // held. A write, not a write_only: the local runtime may rename a write_only that finds
  // readers pending (run it at once on a buffer of its own), and this one gives back the pages
  // those readers read.
  if (rank_ != record.holder && record.buffer)
    submit_local(*local_, impl_->flush_name, invoke_discard, DiscardClosure{record.buffer},
                 record.state, AccessMode::write);
}

void Runtime::copy_home(const HandleBase& handle) {
  const detail::HandleRecord& record = start_procedure(handle, "copy_home");
  if (rank_ == record.holder) RuntimeAccess::copy_home(*local_, record.state);
}

void Runtime::fetch(const HandleBase& handle, int rank) {
  const detail::RemoteAccess access{versa::detail::state_of(handle), AccessMode::read};
  Impl& s = *impl_;
  const Statistics before = s.counts;
  plan("versa::mpi fetch", &access, 1, rank);
  s.counts = before;  // not a task
}

// --- Procedure: wait_all ----------------------------------------------------------------------

// Frees the memory the runtime allocated for handles the program has destroyed since the last
// wait_all (forget): their tasks have run.
void Runtime::release_buffers() {
  Impl& s = *impl_;
  if (s.released_buffers.empty()) return;
  std::sort(s.released_buffers.begin(), s.released_buffers.end());
  std::erase_if(s.buffers, [&s](const std::unique_ptr<detail::CopyBuffer>& buffer) {
    return std::binary_search(s.released_buffers.begin(), s.released_buffers.end(), buffer.get());
  });
  s.released_buffers.clear();
}

// Every rank reaches the collective step, failures or not (the transfers of a spoilt version
// still go, as failure news), so nothing hangs on a rank whose peer failed.
void Runtime::wait_all() { synchronize(false); }

void Runtime::synchronize(bool ending) {
  // A view this thread holds that a task waits for (a send, say) would keep this rank from
  // ever finishing its tasks, and every rank would wait in the collective: refused before
  // anything, on this rank alone, which calls wait_all again once it has released the view.
  if (!ending) RuntimeAccess::refuse_waiting_on_own_views(*local_);
  combine_open_adds();
  Impl& s = *impl_;
  // In the background: ranks whose streams differ may wait for messages nobody sends, and the
  // check fails those receives, so that the local wait ends. The end is marked, so that a rank
  // leaving while another waits in wait_all is a divergence, not a match.
  // The wait (or the end) is an event of the stream too: a rank waiting here disagrees, for
  // the stream probes, with one that submitted something else at this position.
  std::uint64_t checked = s.stream_hash;
  detail::mix_text(checked, ending ? "end" : "wait_all");
  s.engine->stream_log().append(checked);
  s.engine->check_stream(checked);
  std::exception_ptr local_failure;
  try {
    local_->wait_all();
  } catch (...) {
    local_failure = std::current_exception();
  }
  release_buffers();
  const std::uint64_t failed = local_failure ? static_cast<std::uint64_t>(size_ - rank_) : 0;
  const std::vector<std::uint64_t> all = s.engine->allreduce_max({failed});
  if (s.engine->diverged())
    throw DivergenceError(
        "versa::mpi: the ranks submitted different streams of tasks and handles (rank " +
        std::to_string(rank_) +
        " differs from another, or a rank's runtime ended while another waited in wait_all); "
        "every rank must register the same handles and submit the same tasks in the same order");
  s.engine->stream_log().forget_agreed();  // every rank reached this position alike
  if (local_failure) std::rethrow_exception(local_failure);
  if (all[0] != 0) {
    const int rank = size_ - static_cast<int>(all[0]);
    throw RemoteFailure(rank, "versa::mpi: a task failed on rank " + std::to_string(rank) +
                                  " (its wait_all reports which)");
  }
}

}  // namespace versa::mpi
