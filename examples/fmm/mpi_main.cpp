// The FMM of task_program.hpp on the ranks of an MPI job (versa::mpi): every rank builds the
// same tree and submits the same task flow (flow::submit_tasks, the one TaskProgram submits);
// the groups are dealt to the ranks in contiguous ranges of the tree's Morton order, level by
// level, so a rank owns a region of space at every level; each task runs on the owner of the
// group it writes, and what it lacks (multipoles for M2L, points for P2P across a region's
// border, ...) travels as the data versions say. The results' `add`s meet at their group's
// owner, and every result is then gathered on rank 0. With --check, rank 0 compares them with
// the sequential evaluation (Solver::evaluate).
//   mpirun -n 4 fmm_mpi --n 50000 --check
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "accuracy.hpp"
#include "command_line.hpp"
#include "distributions.hpp"
#include "fmm.hpp"
#include "group_data.hpp"
#include "octree.hpp"
#include "options.hpp"
#include "result_line.hpp"
#include "task_flow.hpp"
#include "versa/mpi.hpp"

namespace {

struct Options {
  long n = 20000;
  fmm::Distribution distribution = fmm::Distribution::uniform;
  double eps = 1e-6;
  int workers = 1;
  bool check = false;
};

// Binds the options to `o`.
void add_options(example::OptionParser& parser, Options& o) {
  fmm::add_point_set_options(parser, o.n, o.distribution, o.eps);
  example::add_rank_workers_option(parser, o.workers);
  parser.flag("--check", o.check,
              "compare the results gathered on rank 0 with the sequential evaluation (relative "
              "difference at most 1e-12)");
}

int run(const Options& o) {
  fmm::use_one_blas_thread();
  versa::Config config;
  config.cpu_workers = o.workers;
  config.pin_workers = false;  // ranks share the machine
  config.quiet = true;
  versa::mpi::Runtime rt(config);
  const fmm::Points points = fmm::make_points(o.distribution, static_cast<std::size_t>(o.n), 42);
  const fmm::Solver solver({.eps = o.eps});

  const auto start = std::chrono::steady_clock::now();
  fmm::Solver::Plan plan = solver.plan(points);
  fmm::GroupData data(plan.tree, plan.groups, solver.operators());
  std::vector<std::vector<std::int32_t>> work_lists = plan.groups.take_work_lists();
  fmm::flow::TaskTypes types({});
  types.context = fmm::KernelContext::of(plan.tree, solver.operators());
  const fmm::flow::Owners owners =
      fmm::flow::Owners::in_morton_ranges(plan.groups, points.size(), rt.size());
  std::vector<double> m2l_operators;
  versa::Handle<double> m2l_operators_handle;
  if (rt.local().gpu_count() > 0) {
    m2l_operators = solver.operators().m2l_operators();
    if (!m2l_operators.empty()) m2l_operators_handle = rt.data(m2l_operators, 0, "m2l operators");
  }
  const double plan_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmm::Potentials result;
  {
    fmm::flow::Handles h(plan.groups, data, work_lists, owners,
                         [&rt]<class T>(std::span<T> array, int owner, const char* name) {
                           return rt.data(array.data(), array.size(), owner, name);
                         });
    fmm::flow::submit_tasks(rt, types, plan.groups, h,
                            {.m2l = m2l_operators.empty() ? nullptr : &m2l_operators_handle});
    for (const versa::Handle<double>& results : h.results) rt.fetch(results, 0);
    rt.wait_all();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const versa::mpi::Statistics s = rt.statistics();
  std::printf(
      "rank %d: tree %.3f s; %llu tasks run, %llu pruned; %llu messages (%.1f MiB) sent, %llu "
      "received\n",
      rt.rank(), plan_seconds, static_cast<unsigned long long>(s.tasks_executed),
      static_cast<unsigned long long>(s.tasks_pruned),
      static_cast<unsigned long long>(s.messages_sent), s.bytes_sent / 1048576.0,
      static_cast<unsigned long long>(s.messages_received));
  if (rt.rank() != 0) return 0;
  result = data.results_in_input_order(plan.tree);
  std::printf("fmm_mpi: %zu points (%s), eps %g, %zu tasks on %d ranks x %d workers: %.3f s\n",
              points.size(), fmm::to_string(o.distribution), o.eps, plan.groups.tasks().size(),
              rt.size(), o.workers, seconds);
  example::print_result("mpi-fmm", "versa",
                        "points=" + std::to_string(points.size()) + ",ranks=" +
                            std::to_string(rt.size()) + ",workers=" + std::to_string(o.workers),
                        "seconds", seconds, "s");
  if (!o.check) return 0;
  return fmm::equals_sequential(result, solver.evaluate(points)) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return example::tool_main<Options>(
      argc, argv, "fmm_mpi",
      "Evaluates the fast multipole method's potential and field at every point, as a task\n"
      "flow over the ranks of an MPI job, each rank owning a region of space.",
      add_options, run);
}
