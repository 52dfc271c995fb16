// The FMM on StarPU-MPI, the peer of fmm_mpi (examples/fmm/mpi_main.cpp): every rank builds the
// same tree and inserts the same tasks with starpu_mpi_task_insert, in the group tree's order,
// with the kernels, access modes and priorities of the single-process StarPU twin
// (bench/fmm/starpu_fmm_tasks.hpp, which has Versa's task flow's). The groups belong to the ranks
// as fmm_mpi deals them (fmm::flow::Owners::in_morton_ranges), each registered in place on its
// owner (STARPU_MAIN_RAM; the expansions, like the twin's, with no home copy, zeroed where first
// made) and without memory elsewhere (home node -1); each task runs where fmm_mpi runs it
// (STARPU_EXECUTE_ON_NODE: the owner of the group it writes first, fmm::flow::executor), and
// StarPU-MPI sends what it reads. A P2P pair whose second group's results belong to another rank
// writes them there too: StarPU-MPI's rule for written data is to receive the owner's copy and
// send it back after the task (fmm_mpi's `add` leaves a partial sum, merged at the owner
// instead). Every rank's results are then gathered on rank 0 (starpu_mpi_get_data_on_node), and
// with --check compared with the sequential evaluation (Solver::evaluate). One CPU worker per
// rank; the clock runs from the tree to the gathered results, as fmm_mpi's does.
//   mpirun -n 4 versa-bench-mpi-fmm-starpu --n 50000 [--sched prio] [--check]
#include <mpi.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "accuracy.hpp"
#include "command_line.hpp"
#include "common/starpu_support.hpp"
#include "distributions.hpp"
#include "fmm.hpp"
#include "fmm/starpu_fmm_tasks.hpp"
#include "group_data.hpp"
#include "mpi/starpu_mpi_session.hpp"
#include "options.hpp"
#include "result_line.hpp"
#include "task_flow.hpp"

namespace {

using namespace bench::starpu_fmm;
using bench::check;

struct Options {
  long n = 20000;
  fmm::Distribution distribution = fmm::Distribution::uniform;
  double eps = 1e-6;
  std::string sched = "prio";
  bool check = false;
};

// Histories of their own: several ranks save theirs at shutdown.
Models& models() {
  static Models instance("versa_bench_mpi_fmm");
  return instance;
}

// The codelets of the twin, on CPUs, their results accessed as the twin's default (commute).
struct Codelets {
  std::array<starpu_codelet, fmm::kernel_count> kernels{};
  starpu_codelet zero{}, sum{};

  explicit Codelets(const std::string& scheduler) {
    const bool with_models = reads_models(scheduler);
    for (int k = 0; k < fmm::kernel_count; ++k) {
      const auto kernel = static_cast<Kernel>(k);
      const std::vector<starpu_data_access_mode> modes = codelet_modes(kernel, commute, false);
      kernels[k] = bench::make_codelet(cpu_body(kernel, false), static_cast<int>(modes.size()),
                                       modes, with_models ? &models().history[k] : nullptr);
      kernels[k].name = fmm::to_string(kernel);
    }
    // StarPU 1.3 asserts that the merge codelet's destination is exactly STARPU_RW.
    zero = bench::make_codelet(zero_body, 1, {STARPU_W}, nullptr);
    sum = bench::make_codelet(sum_body, 2, {STARPU_RW, STARPU_R}, nullptr);
  }
};

// One evaluation's group arrays and work lists, registered on every rank with their owner and
// a tag (the same on every rank: the ranks register in the same order), unregistered on
// destruction.
class Registration : public GroupHandles {
 public:
  Registration(const fmm::GroupTree& groups, fmm::GroupData& data, const fmm::flow::Owners& owners,
               int rank, Codelets& cl)
      : rank_(rank) {
    for (std::size_t g = 0; g < groups.particle_groups().size(); ++g) {
      points.push_back(add(data.points(g), owners.particle(g)));
      results.push_back(add(data.results(g), owners.particle(g)));
    }
    // Intermediate, as the twin's: no home copy on the owner either, zeroed where first made
    // (the initialisation codelet of the reduction methods).
    for (std::size_t g = 0; g < groups.cell_groups().size(); ++g) {
      const int owner = owners.cell(g);
      for (auto [list, array] : {std::pair{&multipoles, data.multipoles(g)},
                                 std::pair{&compressed_multipoles, data.compressed_multipoles(g)},
                                 std::pair{&compressed_locals, data.compressed_locals(g)},
                                 std::pair{&locals, data.locals(g)}}) {
        starpu_data_handle_t handle = nullptr;
        starpu_vector_data_register(&handle, -1, 0, static_cast<uint32_t>(array.size()),
                                    sizeof(double));
        starpu_data_set_reduction_methods(handle, &cl.sum, &cl.zero);
        starpu_mpi_data_register(handle, next_tag_++, owner);
        list->push_back(handle);
      }
    }
    // Every rank has the work lists (each builds the tree): registered in place everywhere,
    // owned by the rank that runs the task, so that they never travel.
    for (const fmm::GroupTask& task : groups.tasks()) {
      if (task.work.empty()) {
        work.push_back(nullptr);
        continue;
      }
      starpu_data_handle_t handle = nullptr;
      starpu_vector_data_register(&handle, STARPU_MAIN_RAM,
                                  reinterpret_cast<uintptr_t>(task.work.data()),
                                  static_cast<uint32_t>(task.work.size()), sizeof(std::int32_t));
      starpu_mpi_data_register(handle, next_tag_++, fmm::flow::executor(task, owners));
      work.push_back(handle);
    }
  }

  ~Registration() { unregister_all(); }
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;

 private:
  // A group's array: in place on its owner, without memory elsewhere.
  starpu_data_handle_t add(std::span<double> array, int owner) {
    starpu_data_handle_t handle = nullptr;
    if (owner == rank_)
      starpu_vector_data_register(&handle, STARPU_MAIN_RAM,
                                  reinterpret_cast<uintptr_t>(array.data()),
                                  static_cast<uint32_t>(array.size()), sizeof(double));
    else
      starpu_vector_data_register(&handle, -1, 0, static_cast<uint32_t>(array.size()),
                                  sizeof(double));
    starpu_mpi_data_register(handle, next_tag_++, owner);
    return handle;
  }

  int rank_;
  starpu_mpi_tag_t next_tag_ = 0;
};

// Inserts the group tree's tasks in its order, each on its executor. `args` holds one argument
// per task and outlives them.
void insert_tasks(const fmm::GroupTree& groups, const Registration& h,
                  const fmm::flow::Owners& owners, Codelets& cl, std::vector<TaskArg>& args) {
  const int min_priority = starpu_sched_get_min_priority();
  const int max_priority = starpu_sched_get_max_priority();
  for (std::size_t t = 0; t < groups.tasks().size(); ++t) {
    const fmm::GroupTask& task = groups.tasks()[t];
    starpu_codelet* codelet = &cl.kernels[static_cast<std::size_t>(task.kernel)];
    const std::vector<starpu_data_handle_t> buffers = task_buffers(groups, t, h);
    std::vector<starpu_data_descr> descriptions;
    for (std::size_t b = 0; b < buffers.size(); ++b)
      descriptions.push_back({buffers[b], codelet->modes[b]});
    check(starpu_mpi_task_insert(
              MPI_COMM_WORLD, codelet, STARPU_DATA_MODE_ARRAY, descriptions.data(),
              static_cast<int>(descriptions.size()), STARPU_PRIORITY,
              std::clamp(fmm::priority_of(task.kernel), min_priority, max_priority),
              STARPU_EXECUTE_ON_NODE, fmm::flow::executor(task, owners), STARPU_CL_ARGS_NFREE,
              &args[t], sizeof(TaskArg), 0),
          "starpu_mpi_task_insert");
  }
}

int run(const Options& o, int* argc, char*** argv) {
  fmm::use_one_blas_thread();
  bench::StarpuMpiSession s(argc, argv, o.sched.c_str(),
                            o.sched == "heteroprio" ? heteroprio_buckets : nullptr);
  Codelets cl(o.sched);
  const fmm::Points points = fmm::make_points(o.distribution, static_cast<std::size_t>(o.n), 42);
  const fmm::Solver solver({.eps = o.eps});

  const auto start = std::chrono::steady_clock::now();
  const fmm::Solver::Plan plan = solver.plan(points);
  fmm::GroupData data(plan.tree, plan.groups, solver.operators());
  const fmm::KernelContext context = fmm::KernelContext::of(plan.tree, solver.operators());
  const fmm::flow::Owners owners =
      fmm::flow::Owners::in_morton_ranges(plan.groups, points.size(), s.size());
  KernelClocks clocks;
  std::vector<TaskArg> args;
  for (const fmm::GroupTask& task : plan.groups.tasks())
    args.push_back(
        {&context, &clocks, task.kernel, task.interactions, nullptr, task.rows, nullptr});
  {
    Registration h(plan.groups, data, owners, s.rank(), cl);
    insert_tasks(plan.groups, h, owners, cl, args);
    // Every group's results to rank 0, which copies them out of StarPU's buffers.
    for (std::size_t g = 0; g < h.results.size(); ++g)
      starpu_mpi_get_data_on_node(MPI_COMM_WORLD, h.results[g], 0);
    check(starpu_mpi_wait_for_all(MPI_COMM_WORLD), "starpu_mpi_wait_for_all");
    if (s.rank() == 0)
      for (std::size_t g = 0; g < h.results.size(); ++g) {
        if (owners.particle(g) == 0) continue;  // registered in place
        check(starpu_data_acquire(h.results[g], STARPU_R), "starpu_data_acquire");
        const std::span<double> into = data.results(g);
        std::memcpy(into.data(),
                    reinterpret_cast<const void*>(starpu_vector_get_local_ptr(h.results[g])),
                    into.size_bytes());
        starpu_data_release(h.results[g]);
      }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long tasks_run = 0;
  for (const auto& count : clocks.tasks) tasks_run += count.load();
  std::printf("rank %d: %ld tasks run\n", s.rank(), tasks_run);
  std::fflush(stdout);
  if (s.rank() != 0) return 0;
  const fmm::Potentials result = data.results_in_input_order(plan.tree);
  std::printf(
      "starpu-mpi fmm: %zu points (%s), eps %g, %zu tasks on %d ranks x 1 worker (%s): %.3f s\n",
      points.size(), fmm::to_string(o.distribution), o.eps, plan.groups.tasks().size(), s.size(),
      o.sched.c_str(), seconds);
  example::print_result("mpi-fmm", "starpu-mpi",
                        "points=" + std::to_string(points.size()) +
                            ",ranks=" + std::to_string(s.size()) + ",workers=1",
                        "seconds", seconds, "s");
  if (!o.check) return 0;
  return fmm::equals_sequential(result, solver.evaluate(points)) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  example::OptionParser parser{
      "versa-bench-mpi-fmm-starpu",
      "Evaluates the fast multipole method's potential and field at every point on StarPU-MPI,\n"
      "each rank owning a region of space, as fmm_mpi does."};
  Options o;
  fmm::add_point_set_options(parser, o.n, o.distribution, o.eps);
  parser.option("--sched", o.sched, "StarPU scheduling policy (one CPU worker per rank)")
      .show_default();
  parser.flag("--check", o.check,
              "compare the results gathered on rank 0 with the sequential evaluation (relative "
              "difference at most 1e-12)");
  return example::run_tool(parser, argc, argv, [&] { return run(o, &argc, &argv); });
}
