// Distributed execution over MPI (library versa_mpi, target versa::mpi; built when CMake finds
// MPI, see VERSA_MPI). docs/distributed.md describes the model and the protocol.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "versa/runtime.hpp"

namespace versa::mpi {

// Task option: run the task on `rank` instead of the owner of the first handle it modifies.
struct OnRank {
  int rank;
};
inline OnRank on_rank(int rank) { return {rank}; }

// The 2-D block-cyclic distribution of tiles (ScaLAPACK's): ranks form a rows x cols grid, and
// tile (i, j) belongs to rank (i mod rows) * cols + (j mod cols).
//   auto grid = versa::mpi::BlockCyclic::for_ranks(rt.size());
//   auto a = rt.tile(p, b, b, ld, grid.owner(i, j));
struct BlockCyclic {
  int rows = 1;
  int cols = 1;
  int owner(std::size_t i, std::size_t j) const {
    return static_cast<int>(i % static_cast<std::size_t>(rows)) * cols +
           static_cast<int>(j % static_cast<std::size_t>(cols));
  }
  // The squarest grid of `ranks` ranks (rows <= cols, rows * cols == ranks).
  static BlockCyclic for_ranks(int ranks);
};

// What this rank did since the runtime started.
struct Statistics {
  std::uint64_t tasks_submitted = 0;  // tasks submitted (the same on every rank)
  std::uint64_t tasks_executed = 0;   // of those, run on this rank
  std::uint64_t tasks_pruned = 0;     // of those, with nothing to do on this rank
  std::uint64_t messages_sent = 0;    // one per (handle version, destination)
  std::uint64_t bytes_sent = 0;       // data bytes of those (envelopes not counted)
  std::uint64_t messages_received = 0;
  std::uint64_t bytes_received = 0;
};

// wait_all() on every rank, when the ranks did not submit the same stream of tasks and handles.
class DivergenceError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// wait_all() on a rank whose own tasks succeeded, when a task failed on another rank; and the
// failure of a receive whose data was spoilt on the sending rank.
class RemoteFailure : public std::runtime_error {
 public:
  RemoteFailure(int rank, const std::string& message) : std::runtime_error(message), rank_(rank) {}
  // The lowest rank where a task failed.
  int rank() const { return rank_; }

 private:
  int rank_;
};

namespace detail {
using versa::detail::HandleState;
struct HandleRecord;  // handle_directory.hpp
// One access of a submitted task, as the distributed layer sees it.
struct RemoteAccess {
  HandleState* handle;
  AccessMode mode;
};
}  // namespace detail

// A rank-aware runtime: every rank of the communicator creates one, registers the same handles
// in the same order (each with an owner rank) and submits the same tasks in the same order.
// Each task runs on one rank (the owner of the first handle it modifies, or on_rank(r); with
// none modified, the owner of its first handle; with no handle, rank 0); the other ranks only
// record what it does to the data. The inputs a task lacks on its rank are
// sent by the rank that holds their latest version, once per (version, rank): nothing about
// messages is written by the program.
//
//   versa::mpi::Runtime rt;                                 // MPI_COMM_WORLD; 1 local worker
//   std::vector<double> x(n), y(n);
//   auto hx = rt.data(x, /*owner=*/0), hy = rt.data(y, /*owner=*/1);
//   rt.submit("init", [](versa::Span<double> v) { ... }, versa::write_only(hx));  // on rank 0
//   rt.submit("axpy", body, versa::read(hx), versa::write(hy));  // on rank 1; x moves 0 -> 1
//   rt.wait_all();                                          // every rank; throws on any failure
//
// MPI: when MPI is not initialized, the constructor initializes it with MPI_THREAD_SERIALIZED
// and the destructor finalizes it (so one such runtime per process). When the program has
// initialized MPI, the level must be at least MPI_THREAD_SERIALIZED; the runtime calls MPI only
// from its progress thread (between construction and destruction), so a program that calls
// MPI itself while a runtime lives needs MPI_THREAD_MULTIPLE. The runtime works on a duplicate
// of `comm`, so its messages never match the program's.
//
// Thread-safety: submit, fetch and wait_all are called by one thread per rank (they define the
// stream every rank must repeat), which also registers and destroys the handles (every rank at
// the same place of its stream: a destroyed handle's open run of adds ends then); tasks may not
// submit to this runtime (spawn inside their own bodies is local to the rank and invisible to
// the others).
//
// Accelerators: each rank's local runtime uses the devices its Config gives it, as in one
// process; data goes between ranks through host memory (the transfer tasks run on the host, so
// the local runtime brings a device's copy home before a send and a receive makes the host copy
// the valid one). Ranks that share a machine share its GPUs unless each is given its own (e.g.
// CUDA_VISIBLE_DEVICES per rank).
//
// Reductions: `add` accesses run on their executor like any task (set_reduction on every rank);
// the adds of one run accumulate on their ranks and meet at the handle's owner when another
// access (or fetch, or wait_all) ends the run: one message per other rank that took part.
class Runtime {
 public:
  // Starts the local runtime with `config` (cpu_workers 0 means 1 per rank here, since ranks
  // usually share a node), and the progress thread. Throws std::runtime_error when MPI cannot
  // give the thread level.
  explicit Runtime(Config config = {}, MPI_Comm comm = MPI_COMM_WORLD);
  // Collective, like wait_all, which it does once more (unless a divergence was found): every
  // rank destroys its runtime. A rank whose runtime ends early (its program threw, or skipped
  // submissions) thereby meets the others' wait_all, which then throws DivergenceError instead
  // of waiting for it for ever. What that last wait reports (a divergence, failures since the
  // last wait_all) goes to Config::diagnostics, or to stderr without it.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // The runtime of this rank, for what is local (statistics, describe_pending).
  versa::Runtime& local() { return *local_; }

  // Registers `count` elements at `data` owned by rank `owner`. Every rank registers every
  // handle, in the same order (the order gives the handle its global id). On the owner the
  // memory holds the initial value; elsewhere it receives copies, and may be null: the runtime
  // then allocates it (for as long as the runtime lives).
  template <class T>
  Handle<T> data(T* data, std::size_t count, int owner, std::string name = {}) {
    void* p = prepare(data, {count, 1, count, sizeof(T)}, owner, name);
    return add(local_->data(static_cast<T*>(p), count, std::move(name)), owner, p != data);
  }
  template <class T>
  Handle<T> data(std::vector<T>& values, int owner, std::string name = {}) {
    return data(values.data(), values.size(), owner, std::move(name));
  }
  // A single object owned by `owner`; see data().
  template <class T>
  requires(!std::is_pointer_v<T>) Handle<T> data(T& value, int owner, std::string name = {}) {
    return data(&value, 1, owner, std::move(name));
  }
  // A column-major rows x cols tile with leading dimension ld, owned by `owner`; see data().
  template <class T>
  TileHandle<T> tile(T* data, std::size_t rows, std::size_t cols, std::size_t ld, int owner,
                     std::string name = {}) {
    void* p = prepare(data, {rows, cols, ld, sizeof(T)}, owner, name);
    return add(local_->tile(static_cast<T*>(p), rows, cols, ld, std::move(name)), owner, p != data);
  }
  // Scratch data (versa::Runtime::scratch): `count` elements owned by rank `owner`, in memory
  // the runtime allocates on every rank, all zero. Every rank registers it in order, as any
  // handle; since every rank starts with the same zeros, none is sent them. Destroying the
  // handle (every rank at the same place of its stream, as any handle) does not wait for its
  // tasks: a rank frees its memory once its tasks on it have run.
  template <class T>
  requires std::is_trivially_copyable_v<T> Handle<T> scratch(std::size_t count, int owner,
                                                             std::string name = {}) {
    check_owner(owner);
    return add(local_->scratch<T>(count, std::move(name)), owner, false, true);
  }
  // A rows x cols column-major tile (leading dimension rows) of scratch data; see scratch().
  template <class T>
  requires std::is_trivially_copyable_v<T> TileHandle<T> scratch_tile(std::size_t rows,
                                                                      std::size_t cols, int owner,
                                                                      std::string name = {}) {
    check_owner(owner);
    return add(local_->scratch_tile<T>(rows, cols, std::move(name)), owner, false, true);
  }
  // A handle with no data, for ordering tasks across ranks.
  Token token(int owner, std::string name = {}) {
    check_owner(owner);
    return add(local_->token(std::move(name)), owner);
  }

  // The owner `handle` was registered with, and the rank that holds its latest version (as
  // submitted so far). Throws std::invalid_argument for a handle of another runtime.
  int owner(const HandleBase& handle) const;
  int holder(const HandleBase& handle) const;

  // Submits a task on every rank (see the class comment); arguments as versa::Runtime::submit,
  // plus on_rank(r) anywhere among them. Throws std::invalid_argument, on every rank alike, for
  // a handle not registered with this runtime or given twice, an `add` to a handle with no
  // reduction operator, or a user-defined mode that reduces (only `add` is distributed). What
  // only the rank that runs it can refuse (no implementation for its devices, a task type's
  // operator other than the handle's) makes the task fail there instead, and wait_all report
  // it on every rank.
  template <class Cpu, class Cuda, class Emulated, class... Args>
  void submit(const TaskType<Cpu, Cuda, Emulated>& type, Args&&... args) {
    if (plan_task(type.name(), args...)) forward_type(type, args...);
  }
  template <class F, class... Args>
  requires(!std::is_convertible_v<F, std::string_view>) void submit(std::string_view name, F&& body,
                                                                    Args&&... args) {
    if (plan_task(name, args...)) forward_body(name, std::forward<F>(body), args...);
  }

  // Makes `rank` hold the latest version of `handle` (a message when it lacks it), so that its
  // memory there has the value after wait_all(). Every rank calls it, like submit.
  void fetch(const HandleBase& handle, int rank);
  // Drops the copies of `handle`'s latest version on every rank but its holder (ending an open
  // run of adds first): a later task that reads it elsewhere receives it again. On a rank whose
  // memory for the handle the runtime allocated (registered with a null pointer), that memory
  // goes back to the system once the rank's earlier tasks on the handle are done, and is mapped
  // again when a version next arrives. Every rank calls it, like submit; it waits for nothing.
  void flush(const HandleBase& handle);
  // Copies the latest version of `handle` home on its holder (versa::Runtime::copy_home: from
  // its devices into its memory, beside later tasks), ending an open run of adds first. Every
  // rank calls it, like submit; it waits for nothing.
  void copy_home(const HandleBase& handle);

  // Waits for every task on every rank: the local tasks, then a collective step that compares
  // the ranks' submitted streams and failures. Throws, on every rank alike: DivergenceError when
  // the streams differ; the local TaskFailure when a task of this rank failed; RemoteFailure
  // when only another rank's did.
  void wait_all();

  // What this rank did (messages counted as the progress thread issues and receives them).
  Statistics statistics() const;

 private:
  struct Impl;

  // Throws std::invalid_argument unless `owner` is a rank of the communicator.
  void check_owner(int owner) const;
  // The memory of a handle of `layout` on this rank: `data`, or for null (on a rank that does
  // not own it) a buffer the runtime allocates. Throws std::invalid_argument for a bad owner or
  // leading dimension, or null memory on the owner, and std::length_error for a size that
  // overflows, naming the handle.
  void* prepare(void* data, const versa::detail::Layout& layout, int owner,
                const std::string& name);
  // `allocated`: the handle's memory on this rank is the buffer prepare() just made.
  // `zero_everywhere`: every rank holds its version 0 (scratch data).
  void register_handle(versa::detail::HandleState* state, int owner, bool allocated,
                       bool zero_everywhere);
  // The program destroys the handle with this replica: its record ends.
  void forget(versa::detail::HandleState& state);
  // Frees the memory allocated for the handles destroyed since the last wait_all.
  void release_buffers();
  template <class H>
  H add(H handle, int owner, bool allocated = false, bool zero_everywhere = false) {
    register_handle(versa::detail::state_of(handle), owner, allocated, zero_everywhere);
    return handle;
  }

  // Records the task's effect on the data on this rank and issues the transfers it needs;
  // returns whether this rank runs it.
  bool plan(std::string_view name, const detail::RemoteAccess* accesses, std::size_t count,
            int executor);
  // Issues this rank's part (a send, a receive, or none) of moving the latest version of handle
  // `id` from rank `from` to rank `to`; returns whether it has one.
  bool transfer(std::uint32_t id, int from, int to);
  // Records an add by `executor` to handle `id`, and ends a run of adds (the contributions
  // meet at the owner), issuing this rank's part; both return whether it has one.
  bool join_adds(std::uint32_t id, int executor);
  bool combine_adds(std::uint32_t id);
  void combine_open_adds();
  // The start of a procedure on one handle (flush, copy_home) on every rank alike: its record in
  // the directory, the procedure in the submitted stream, an open run of adds ended. Throws
  // std::invalid_argument when the handle is not registered with this runtime.
  detail::HandleRecord& start_procedure(const HandleBase& handle, const char* procedure);
  // wait_all; `ending`: from the destructor, whose stream check never equals a wait_all's.
  void synchronize(bool ending);
  template <class... Args>
  bool plan_task(std::string_view name, const Args&... args) {
    constexpr std::size_t n = (std::size_t{0} + ... + (versa::detail::is_access_v<Args> ? 1 : 0));
    detail::RemoteAccess accesses[n > 0 ? n : 1]{};  // {}: with none, one unread entry
    detail::RemoteAccess* next = accesses;
    int executor = -1;
    auto collect = [&](const auto& arg) {
      using T = std::remove_cvref_t<decltype(arg)>;
      if constexpr (versa::detail::is_access_v<T>) {
        *next++ = {arg.handle, arg.mode};
      } else if constexpr (std::is_same_v<T, OnRank>) {
        executor = arg.rank;
      }
    };
    (collect(args), ...);
    (void)collect;  // a task with no arguments
    return plan(name, accesses, n, executor);
  }
  // Submit to the local runtime with the on_rank() options left out. A task the local runtime
  // refuses (what only the executor can tell: its devices, the operator of the task type
  // against the handle's) has been planned on every rank already, the other ranks waiting for
  // its outputs: it becomes a task that fails with the refusal, whose failure reaches every
  // rank as any other's does.
  template <class Type, class... Args>
  void forward_type(const Type& type, const Args&... args) {
    try {
      std::apply([&](const auto&... kept) { local_->submit(type, kept...); },
                 std::tuple_cat(keep(args)...));
    } catch (const std::invalid_argument&) {
      fail_in_place(type.name(), std::current_exception(), args...);
    }
  }
  template <class F, class... Args>
  void forward_body(std::string_view name, F&& body, const Args&... args) {
    try {
      std::apply([&](const auto&... kept) { local_->submit(name, std::forward<F>(body), kept...); },
                 std::tuple_cat(keep(args)...));
    } catch (const std::invalid_argument&) {
      fail_in_place(name, std::current_exception(), args...);
    }
  }
  template <class... Args>
  void fail_in_place(std::string_view name, std::exception_ptr refusal, const Args&... args) {
    std::apply(
        [&](const auto&... accesses) {
          local_->submit(
              name, [refusal](const auto&...) { std::rethrow_exception(refusal); }, accesses...);
        },
        std::tuple_cat(keep_access(args)...));
  }
  template <class T>
  static auto keep(const T& arg) {
    if constexpr (std::is_same_v<T, OnRank>) {
      return std::tuple<>();
    } else {
      return std::tuple<const T&>(arg);
    }
  }
  template <class T>
  static auto keep_access(const T& arg) {
    if constexpr (versa::detail::is_access_v<T>) {
      return std::tuple<const T&>(arg);
    } else {
      return std::tuple<>();
    }
  }

  int rank_ = 0;
  int size_ = 1;
  std::unique_ptr<Impl> impl_;
  // After impl_: destroyed first, so that its tasks (which use impl_'s progress thread) end
  // while that thread still runs.
  std::unique_ptr<versa::Runtime> local_;
};

}  // namespace versa::mpi
