// The owner-computes rule (docs/distributed.md): every rank applies each submitted task to its
// copy of the handle directory, which says where the task runs and which versions must move;
// the rank issues the transfers it takes part in and runs the task if it is its executor.
// Also the collective end of a phase, wait_all.
#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "base/failure.hpp"
#include "data/handle_state.hpp"
#include "mpi/runtime_access.hpp"
#include "mpi/runtime_impl.hpp"
#include "versa/completion.hpp"
#include "versa/error.hpp"

namespace versa::mpi {

namespace {

using versa::detail::AccessRecord;
using versa::detail::HandleState;
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
  std::uint64_t handle;
  std::uint64_t version;
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
  c.engine->send(c.peer, c.handle, c.version, access.data, *access.layout, std::move(failure),
                 versa::detach());
}

void invoke_receive(void* closure, const AccessRecord* accesses) {
  const auto& c = *static_cast<const TransferClosure*>(closure);
  c.engine->receive(c.peer, c.handle, c.version, accesses[0].data, *accesses[0].layout,
                    versa::detach());
}

// A transfer task on the local runtime, with a body of its own (no user's typed body).
void submit_transfer(versa::Runtime& local, const char* name, versa::detail::InvokeFn invoke,
                     TransferClosure closure, HandleState* handle, AccessMode mode) {
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
  desc.closure_align = alignof(TransferClosure);
  desc.move = [](void* to, void* from) { std::memcpy(to, from, sizeof(TransferClosure)); };
  desc.destroy = nullptr;
  desc.is_child = false;
  desc.work = -1;
  desc.work_hint = nullptr;
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
    if (accesses[i].mode == AccessMode::add ||
        (is_unordered(accesses[i].mode) && !needs_exclusive(accesses[i].mode) &&
         modifies(accesses[i].mode)))
      throw std::invalid_argument(task + ": " + to_string(accesses[i].mode) +
                                  " accesses (reductions) are not supported on a distributed "
                                  "runtime yet");
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
    // An input the executor lacks comes from the holder of its latest version, once.
    if (!reads_contents(accesses[i].mode) || record.valid.has(executor)) continue;
    involved |= transfer(s.ids[i], record.holder, executor);
    record.valid.add(executor);
  }
  // What it modifies, it holds alone, one version later; the other copies are stale.
  for (std::size_t i = 0; i < count; ++i) {
    if (!modifies(accesses[i].mode)) continue;
    detail::HandleRecord& record = s.directory[s.ids[i]];
    ++record.version;
    record.holder = executor;
    record.valid.reset_to(executor);
  }
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
  const TransferClosure closure{s.engine.get(), rank_ == from ? to : from, rank_, id,
                                record.version};
  if (rank_ == from)
    submit_transfer(*local_, s.send_name, invoke_send, closure, record.state, send_access.mode());
  else
    submit_transfer(*local_, s.receive_name, invoke_receive, closure, record.state,
                    AccessMode::write_only);
  return true;
}

void Runtime::fetch(const HandleBase& handle, int rank) {
  const detail::RemoteAccess access{versa::detail::state_of(handle), AccessMode::read};
  Impl& s = *impl_;
  const Statistics before = s.counts;
  plan("versa::mpi fetch", &access, 1, rank);
  s.counts = before;  // not a task
}

// --- Procedure: wait_all ----------------------------------------------------------------------

// Every rank reaches the collective step, failures or not (the transfers of a spoilt version
// still go, as failure news), so nothing hangs on a rank whose peer failed.
void Runtime::wait_all() {
  std::exception_ptr local_failure;
  try {
    local_->wait_all();
  } catch (...) {
    local_failure = std::current_exception();
  }
  Impl& s = *impl_;
  // Equal hashes: the maximum of the hash and of its complement are both the rank's own.
  const std::uint64_t failed = local_failure ? static_cast<std::uint64_t>(size_ - rank_) : 0;
  const std::vector<std::uint64_t> all =
      s.engine->allreduce_max({s.stream_hash, ~s.stream_hash, failed});
  if (all[0] != s.stream_hash || all[1] != ~s.stream_hash)
    throw DivergenceError(
        "versa::mpi: the ranks submitted different streams of tasks and handles (rank " +
        std::to_string(rank_) +
        " differs from another); every rank must register the same "
        "handles and submit the same tasks in the same order");
  if (local_failure) std::rethrow_exception(local_failure);
  if (all[2] != 0) {
    const int rank = size_ - static_cast<int>(all[2]);
    throw RemoteFailure(rank, "versa::mpi: a task failed on rank " + std::to_string(rank) +
                                  " (its wait_all reports which)");
  }
}

}  // namespace versa::mpi
