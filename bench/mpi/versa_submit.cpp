// The cost of a pruned task in versa::mpi: every rank submits every task, and a rank with
// nothing to do for one (not its executor, not a sender) only updates its bookkeeping. Measured
// as the test Distributed.PrunedSubmissionIsCheap does: 10^5 tasks writing one handle of rank 0,
// timed on the last rank, which prunes them all (here after a wait_all, so that the clock starts
// when every rank has registered the handle); the median of --reps runs.
//   mpirun -n 2 versa-bench-mpi-submit [--tasks 100000] [--reps 5]
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "common/harness.hpp"
#include "versa/mpi.hpp"

namespace {

struct Options {
  int tasks = 100000;
  int reps = 5;
};

// Owns MPI for the whole program, so that each repetition's runtime can be a fresh one (a
// runtime that initialized MPI would finalize it). The runtime needs MPI_THREAD_SERIALIZED.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    if (provided < MPI_THREAD_SERIALIZED) {
      MPI_Finalize();
      throw std::runtime_error("MPI provides thread level " + std::to_string(provided) +
                               "; versa::mpi needs MPI_THREAD_SERIALIZED");
    }
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

versa::Config rank_config() {
  versa::Config config;
  config.cpu_workers = 1;
  config.pin_workers = false;
  config.quiet = true;
  config.gpus = 0;
  return config;
}

// One run: nanoseconds per submitted task on this rank. Throws when the tasks did not all run
// on rank 0 or were not all pruned on the last rank.
double pruned_submission_ns(int tasks) {
  versa::mpi::Runtime rt(rank_config());
  if (rt.size() < 2) throw std::invalid_argument("needs at least two ranks (mpirun -n 2)");
  int x = 0;
  auto h = rt.data(x, 0, "x");
  rt.wait_all();  // every rank has registered before the clock starts
  const auto start = bench::Clock::now();
  for (int i = 0; i < tasks; ++i)
    rt.submit(
        "on 0", [](versa::Span<int> v) { ++v[0]; }, versa::write(h));
  const double ns = bench::seconds_since(start) * 1e9 / tasks;
  rt.wait_all();
  if (rt.rank() == 0 && x != tasks)
    throw std::runtime_error("rank 0 counted " + std::to_string(x) + " tasks, not " +
                             std::to_string(tasks));
  if (rt.rank() == rt.size() - 1 &&
      rt.statistics().tasks_pruned != static_cast<std::uint64_t>(tasks))
    throw std::runtime_error("the last rank pruned " +
                             std::to_string(rt.statistics().tasks_pruned) + " tasks, not " +
                             std::to_string(tasks));
  return ns;
}

int run(const Options& o, int* argc, char*** argv) {
  MpiSession mpi(argc, argv);
  std::vector<double> ns;
  for (int r = 0; r < o.reps; ++r) ns.push_back(pruned_submission_ns(o.tasks));
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (rank == ranks - 1) {
    std::printf("%d ranks: %d tasks pruned on rank %d, median of %d runs %.1f ns per task\n", ranks,
                o.tasks, rank, o.reps, bench::median(ns));
    bench::print_result("mpi-submit", "versa", "ranks=" + std::to_string(ranks),
                        "ns_per_pruned_task", bench::median(ns), "ns");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  example::OptionParser parser{
      "versa-bench-mpi-submit",
      "Measures the submission cost of a task that a rank prunes (versa::mpi)."};
  Options o;
  example::add_positive_option(parser, "--tasks", o.tasks, "N", "tasks per run");
  example::add_positive_option(parser, "--reps", o.reps, "R", "runs; the median is reported");
  return example::run_tool(parser, argc, argv, [&] { return run(o, &argc, &argv); });
}
