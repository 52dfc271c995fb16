// The FMM on Versa: each task of the group tree (group_tree.hpp) submitted as a Versa task on
// the handles of its groups' arrays. Multipoles and locals accumulate with `commute` (each
// contribution runs alone on its group, in any order); the results of P2P, M2P and L2P with
// `add` (reductions), so a P2P on a device and an L2P on a CPU each fill their own partial
// results where they run, merged once, instead of the results bouncing between memories. The
// far field's passes run at a higher priority than the near field, which fills the gaps; each
// task tells the cost model its size (interactions or points), so automatic placement learns
// where each kernel runs fastest.
//
//   versa::Runtime rt;
//   const fmm::Solver solver({.eps = 1e-6});
//   fmm::TaskProgram program(rt, solver);
//   fmm::Potentials result = program.evaluate(points);
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fmm.hpp"
#include "group_data.hpp"
#include "group_tree.hpp"
#include "m2l_batches.hpp"
#include "versa/versa.hpp"

namespace fmm {

namespace flow {
struct TaskTypes;  // task_flow.hpp: their types are those of the implementations' lambdas
}

// The kernels call sequential BLAS (M2L's products); call this first when BLAS is threaded, as
// OpenBLAS is by default, so that the workers do not oversubscribe the cores.
void use_one_blas_thread();

// Where the tasks of each kernel may run, indexed by Kernel; automatic by default.
using Placements = std::array<versa::Placement, kernel_count>;

// Parses "p2p=gpu,m2l=auto": kernel names (to_string(Kernel), p2p for both P2P kernels, all for
// every kernel) and
// rules auto, cpu, gpu or prefer-gpu, applied in order on top of `placements`. Throws
// std::invalid_argument naming a bad kernel or rule.
Placements parse_placements(const std::string& text, Placements placements = {});

// What an evaluation builds on the CPU before it submits its tasks: the tree, the groups, the
// groups' arrays (points sorted into leaf order, expansions, results) and the tasks' work
// lists. It refers to itself (the arrays to the tree), so it stays where it was made.
struct PreparedEvaluation {
  PreparedEvaluation(const Solver& solver, const Points& points);
  PreparedEvaluation(const PreparedEvaluation&) = delete;
  PreparedEvaluation& operator=(const PreparedEvaluation&) = delete;

  Solver::Plan plan;
  GroupData data;
  std::vector<std::vector<std::int32_t>> work_lists;  // taken from plan.groups
  std::array<double, kernel_count> work{};            // as TaskProgram::work()
  // With M2L as batched products on devices: the plan of each M2L task (at its task's index;
  // empty elsewhere), which its task takes as its value.
  std::vector<M2LBatches> m2l_batches;
  double near_field_pairs = 0;  // each pair once
  double seconds = 0;           // the wall time TaskProgram::prepare took
};

class TaskProgram {
 public:
  // Builds the task types; `solver` gives the operators (shared, not copied) and the leaf and
  // group sizes.
  TaskProgram(versa::Runtime& runtime, const Solver& solver, const Placements& placements = {});
  ~TaskProgram();
  TaskProgram(const TaskProgram&) = delete;
  TaskProgram& operator=(const TaskProgram&) = delete;

  // The potential and field at every point from all the others, as Solver::evaluate computes
  // them, by tasks on the runtime; waits for them. The phase times are the kernel times of each
  // pass's tasks summed over the workers when the runtime collects task statistics
  // (Config::task_statistics), else 0; tree is the wall time of building the tree and the
  // groups. Throws like Solver::evaluate on bad points, and versa::TaskFailure when a task fails.
  Potentials evaluate(const Points& points);
  Potentials evaluate(const Points& points, PhaseTimes& times);
  // At separate targets, as Solver::evaluate(sources, targets, times).
  Potentials evaluate(const Points& sources, const Points& targets, PhaseTimes& times);

  // evaluate in two halves. prepare builds an evaluation's tree and arrays with threads of its
  // own (parallel_for.hpp), not the runtime's; it may run on another thread while run runs an
  // earlier evaluation's tasks, so that the next tree is built while the devices work (the fmm
  // tool's --overlap-tree), but not beside set_leaf_size. run submits the tasks and waits for
  // them; times.tree is the prepared evaluation's `seconds`. A prepared evaluation runs once:
  // its arrays start at zero, and the tasks accumulate into them. Both throw as evaluate does.
  std::unique_ptr<PreparedEvaluation> prepare(const Points& points) const;
  Potentials run(PreparedEvaluation& prepared, PhaseTimes& times);
  // run, writing the potentials into `into` (GroupData::results_in_input_order): a caller that
  // keeps `into` between evaluations spares each one allocating and zeroing it (at 10^7 points
  // 320 MB, which one thread zeroes in about 0.16 s).
  void run(PreparedEvaluation& prepared, PhaseTimes& times, Potentials& into);

  // How M2L tasks run on devices in the evaluations prepared from now on: false (the default),
  // the block kernel (cuda::m2l); true, batched matrix products (cuda::m2l_products: cuBLAS
  // grouped batched GEMMs, each task's plan made by prepare). The emulated device follows the
  // same choice; CPUs do not change. Not while prepare runs on another thread.
  void set_m2l_products(bool products) { m2l_products_ = products; }
  // Evaluates with another leaf size from now on (LeafTuner). Throws std::invalid_argument on 0.
  void set_leaf_size(std::size_t leaf_size) { solver_ = solver_.with_leaf_size(leaf_size); }
  const Solver& solver() const { return solver_; }
  // The last evaluation's work per kernel (indexed by Kernel; GroupTask::interactions summed):
  // point pairs for P2P, cell pairs for M2L, points or cells for the others.
  const std::array<double, kernel_count>& work() const { return work_; }
  // The last evaluation's P2P point pairs, each pair once (p2p_pairs in group_kernels.hpp), by
  // the kind of device that ran them ("cpu", "emulated", "cuda"); kinds that ran none are left
  // out.
  const std::vector<std::pair<std::string, double>>& p2p_pairs() const { return p2p_pairs_; }

 private:
  versa::Runtime& runtime_;
  Solver solver_;
  std::unique_ptr<flow::TaskTypes> types_;  // task_flow.hpp
  std::array<double, kernel_count> work_{};
  std::vector<std::pair<std::string, double>> p2p_pairs_;
  // With devices: the operator tables of the upward and downward passes
  // (ChebyshevInterpolation::device_tables), registered once so that each device receives them
  // once.
  std::vector<double> device_tables_;
  versa::Handle<double> device_tables_handle_;
  // With devices: the M2L operators for them (ChebyshevInterpolation::m2l_operators), registered
  // once so that they are copied to each device once; empty without devices or when they are
  // not stored.
  std::vector<double> m2l_operators_;
  versa::Handle<double> m2l_operators_handle_;
  bool m2l_products_ = false;
};

}  // namespace fmm
