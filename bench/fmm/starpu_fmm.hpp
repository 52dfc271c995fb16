// The FMM on StarPU: the group tree of examples/fmm (group_tree.hpp) submitted task by task with
// starpu_task_insert, in the order, with the kernels, access modes and priorities of Versa's task
// program (examples/fmm/task_program.cpp), so that the two differ only in the runtime.
//
//   const fmm::Solver solver({.eps = 1e-6, .group_size = 64});
//   bench::StarpuFmm starpu(solver, {.scheduler = "heteroprio"});
//   fmm::Potentials result;
//   starpu.evaluate(points, times, result);
#pragma once

#include <array>
#include <memory>
#include <string>

#include "fmm.hpp"
#include "group_tree.hpp"

namespace bench {

// How P2P, M2P and L2P accumulate into a particle group's results: STARPU_REDUX (a zeroed copy
// per worker, merged by a reduction codelet, as ScalFMM does) or STARPU_RW | STARPU_COMMUTE (the
// contributions run one at a time, in any order). On 2 CPU workers, 2*10^4 uniform points, group
// 256, the two were within the noise of each other (heteroprio: 1.81 and 1.88 s with commute,
// 2.60 and 1.83 s with redux); commute is the default, as it allocates no per-worker copies.
enum class ResultsAccess { redux, commute };

// The performance model of each codelet, for the schedulers that read models (dm*):
// history-based, indexed by the task's work estimate (GroupTask::interactions) rounded to 1/8 of
// a power of two, or a non-linear regression a n^b + c in that estimate.
enum class ModelKind { history, regression };

struct StarpuFmmConfig {
  // A StarPU policy: lws, dmda, dmdas, heteroprio, eager, ... heteroprio (ScalFMM's choice) was
  // the fastest of lws, dmda, dmdas and heteroprio, or within noise of it, on 2 CPU workers at
  // 2*10^4 uniform points, group 256 (lws 4.8 s where the others took 3.6 to 5.0 s).
  std::string scheduler = "heteroprio";
  int workers = 0;  // CPU workers; 0: one per core
  ResultsAccess results = ResultsAccess::commute;
  ModelKind model = ModelKind::history;
  // Also one CUDA worker per GPU, on which every pass can run the example's CUDA kernels
  // (group_kernels_cuda.hpp), as in Versa's task program. Needs a StarPU and a Versa built with
  // CUDA (gpu_built()), commute results (the reduction's methods run on CPUs) and a policy
  // other than heteroprio (its buckets are set for CPUs only).
  bool gpu = false;
  // With gpu: the M2L's CUDA body as batched products (fmm::cuda::m2l_products, planned on the
  // host per task and passed in the task's cl_arg), as Versa's TaskProgram::set_m2l_products.
  bool m2l_products = false;
};

// The tasks that one evaluation ran of one kernel, and their kernel time summed over workers.
struct KernelTally {
  long tasks = 0;
  double seconds = 0;
};

class StarpuFmm {
 public:
  // Starts StarPU with `config`'s workers and scheduler (one StarPU per process: at most one
  // StarpuFmm at a time). `solver` gives the operators and the leaf and group sizes, and must
  // outlive this object. Throws std::runtime_error when StarPU does not start (or, with
  // config.gpu, finds no GPU), std::invalid_argument when config.gpu cannot be met.
  StarpuFmm(const fmm::Solver& solver, const StarpuFmmConfig& config);
  ~StarpuFmm();  // shuts StarPU down
  StarpuFmm(const StarpuFmm&) = delete;
  StarpuFmm& operator=(const StarpuFmm&) = delete;

  // The potential and field at every point from all the others, as fmm::Solver::evaluate
  // computes them, by StarPU tasks; waits for them. Like the task program: the tree, the groups
  // and the registration of their arrays are part of each evaluation, `times.tree` is the wall
  // time of building the tree and groups and the other phases are kernel times summed over the
  // workers. The results go into `into`, written over where it holds as many points already
  // (as the task program's run into). Throws like Solver::evaluate on bad points,
  // std::runtime_error when StarPU fails.
  void evaluate(const fmm::Points& points, fmm::PhaseTimes& times, fmm::Potentials& into);

  // The last evaluation's tasks per kernel, indexed by fmm::Kernel.
  const std::array<KernelTally, fmm::kernel_count>& last_tasks() const { return last_tasks_; }
  int workers() const;  // CPU workers
  int gpus() const;     // CUDA workers

  // Whether this build can run StarpuFmmConfig::gpu.
  static bool gpu_built();

 private:
  struct Session;  // starpu_fmm.cpp: the codelets and their models

  const fmm::Solver& solver_;
  std::unique_ptr<Session> session_;
  std::array<KernelTally, fmm::kernel_count> last_tasks_{};
};

}  // namespace bench
