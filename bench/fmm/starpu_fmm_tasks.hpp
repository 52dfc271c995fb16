// The FMM's tasks as StarPU sees them, shared by the single-process twin (starpu_fmm.cpp) and
// the StarPU-MPI twin (bench/mpi/starpu_mpi_fmm.cpp): a task's argument, the kernel clocks, the
// CPU codelet bodies, the codelets' access modes, the buffers of a task in its codelet's order,
// the priorities and the performance models. The kernels, access modes and priorities are those
// of Versa's task flow (examples/fmm/task_flow.hpp), so that the twins differ from Versa only in
// the runtime.
#pragma once

#include <starpu.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "fmm.hpp"
#include "group_kernels.hpp"
#include "group_tree.hpp"
#include "m2l_batches.hpp"

namespace bench::starpu_fmm {

using fmm::Kernel;

// The kernel time and task count of each kernel, summed over the workers. Relaxed atomics: the
// workers only add, and the totals are read after the tasks are waited for, which orders every
// task's end before.
struct KernelClocks {
  std::array<std::atomic<std::int64_t>, fmm::kernel_count> nanoseconds{}, tasks{};
  void reset() {
    for (int k = 0; k < fmm::kernel_count; ++k) {
      nanoseconds[k].store(0, std::memory_order_relaxed);
      tasks[k].store(0, std::memory_order_relaxed);
    }
  }
};

// Scratch memory of each CUDA worker (indexed by StarPU worker id) for the kernels that ask for
// a workspace (M2L as batched products). A worker's tasks run in its stream's order, so a task
// may reuse what the one before used; a task needing more waits for the stream before growing it.
struct GpuScratch {
  struct Buffer {
    void* data = nullptr;
    std::size_t bytes = 0;
  };
  std::vector<Buffer> buffers;
};

// A task's cl_arg, not copied by StarPU (STARPU_CL_ARGS_NFREE): it lives in the evaluation's
// vector of them until every task has run.
struct TaskArg {
  const fmm::KernelContext* context;
  KernelClocks* clocks;
  Kernel kernel;
  double interactions;  // GroupTask::interactions: what the performance models are indexed by
  const fmm::M2LBatches* m2l_batches;  // M2L as batched products on a GPU; null: the block kernel
  fmm::steps::NearFieldRows rows;      // P2P: GroupTask::rows, the GPU launch's shape
  GpuScratch* scratch;                 // the CUDA workers' workspaces; null without GPUs
};

template <class T>
std::span<T> vector_of(void* buffer) {
  const auto* v = static_cast<const starpu_vector_interface*>(buffer);
  return {reinterpret_cast<T*>(v->ptr), v->nx};
}

using WorkList = std::span<const std::int32_t>;
using In = std::span<const double>;
using Out = std::span<double>;

inline WorkList work(void* buffer) { return vector_of<const std::int32_t>(buffer); }
inline In in(void* buffer) { return vector_of<const double>(buffer); }
inline Out out(void* buffer) { return vector_of<double>(buffer); }

inline constexpr auto commute = static_cast<starpu_data_access_mode>(STARPU_RW | STARPU_COMMUTE);

// The CPU body of `kernel`'s codelet. With `tables` (a run with GPUs), the kernels that have
// CUDA bodies read one buffer more (the operator tables, or M2L's operators), which only their
// CUDA bodies use: after the work list, or first without one.
starpu_cpu_func_t cpu_body(Kernel kernel, bool tables);

// The access modes of `kernel`'s codelet, its results (P2P, M2P, L2P) accessed in `results`
// (STARPU_REDUX or commute); with `tables`, as cpu_body says.
std::vector<starpu_data_access_mode> codelet_modes(Kernel kernel, starpu_data_access_mode results,
                                                   bool tables);

// The handles of one evaluation's group arrays (indexed by group) and work lists (by task; null
// where a task has none), however they were registered.
struct GroupHandles {
  std::vector<starpu_data_handle_t> points, results, multipoles, compressed_multipoles,
      compressed_locals, locals, work;

  // Unregisters them all: the points, results and work lists with their home copies brought up
  // to date (which for a STARPU_REDUX result also merges the workers' copies into it), the
  // expansions dropped where they are.
  void unregister_all();
};

// Task `t`'s buffers in its codelet's order: the work list first where there is one, then (with
// GPUs: `tables` or `m2l_operators` not null) the operator tables or M2L's operators.
std::vector<starpu_data_handle_t> task_buffers(const fmm::GroupTree& groups, std::size_t t,
                                               const GroupHandles& h,
                                               starpu_data_handle_t m2l_operators = nullptr,
                                               starpu_data_handle_t tables = nullptr);

// STARPU_REDUX's methods on results: a worker's copy starts at zero; copies merge by adding.
// `zero` also makes the expansions, which have no home copy.
void zero_body(void* buffers[], void*);
void sum_body(void* buffers[], void*);

// fmm::priority_of's levels, 0 to 3.
inline constexpr unsigned priority_levels = 4;

// heteroprio takes a task's priority as its bucket, and a CPU worker visits the buckets in the
// order of its mapping: 3 (upward) first, 0 (near field) last, as the other policies order
// priorities.
void heteroprio_buckets(unsigned context);

// The performance model of each codelet, for the schedulers that read models (dm*):
// history-based, indexed by the task's work estimate (GroupTask::interactions) rounded to 1/8 of
// a power of two, or a non-linear regression a n^b + c in that estimate. StarPU resets a model's
// state when it shuts down, so one zero-initialised object per model and kind serves every
// StarPU of the process; the symbols start with `prefix` and name the kind, as their calibration
// files differ.
struct Models {
  std::array<starpu_perfmodel, fmm::kernel_count> history{}, regression{};
  std::array<std::string, fmm::kernel_count> history_symbols, regression_symbols;
  explicit Models(const std::string& prefix);
};

// Whether a policy reads codelet models: the deque-model family (dm, dmda, dmdas, ...) and the
// HEFT variants. Elsewhere a model would only add timing and calibration bookkeeping.
bool reads_models(const std::string& scheduler);

}  // namespace bench::starpu_fmm
