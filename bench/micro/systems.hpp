// The micro-benchmark patterns, one implementation per system (versa.cpp, starpu.cpp, openmp.cpp,
// tbb.cpp), all driven by main.cpp in the same process so that ratios come from the same run.
//
// Every function runs the whole pattern once with `workers` worker threads and returns the wall
// time in seconds of submission + execution (set-up of the runtime itself is excluded: each system
// file starts its runtime before the clock starts and stops it after). Task bodies busy-wait with
// bench::busy_wait_us so all systems do identical work.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace bench {

// Result of the task-count pattern.
struct TaskCountResult {
  double seconds = 0;  // submit + run of all tasks
  double bytes_per_pending_task =
      -1;  // heap growth while all tasks were pending, per task; -1 if unknown
};

struct System {
  // "versa", "starpu-lws", "starpu-eager", "starpu-dmda", "starpu-redux", "starpu-commute",
  // "openmp", "tbb". A system leaves the patterns it does not implement empty.
  std::string name;

  // `tasks` empty independent tasks submitted from the main thread, then wait for all.
  std::function<double(int workers, long tasks)> spawn;

  // `tasks` independent tasks each busy-waiting `task_us` microseconds.
  std::function<double(int workers, long tasks, double task_us)> independent;

  // The dependency pattern of a right-looking tiled Cholesky on a tiles x tiles lower-triangular
  // tile matrix (potrf(k): rw A[k][k]; trsm(m,k): r A[k][k], rw A[m][k]; syrk(m,k): r A[m][k],
  // rw A[m][m]; gemm(m,j,k): r A[m][k], r A[j][k], rw A[m][j]), every task busy-waiting `task_us`.
  // Tiles=20 gives 1540 tasks, 50 gives 22100.
  std::function<double(int workers, int tiles, double task_us)> cholesky_dag;

  // `tasks` empty tasks, task i reading the `handles` distinct data items
  // pool[(i * handles + j) % pool_size], j < handles, with pool_size = 1024 items.
  // handles == 0 means tasks with no data at all (the baseline).
  std::function<double(int workers, long tasks, int handles)> dependencies;

  // `tasks` tasks that each busy-wait 1 us, all submitted before any of them may run (they all
  // wait on one gate that is opened after the last submission), then wait for all.
  std::function<TaskCountResult(int workers, long tasks)> task_count;

  // On one data item: one writer, then n readers, then n writers (2n + 1 tasks, empty bodies),
  // submitted in that order; then wait for all. `rounds` times in a row on the same runtime, each
  // round waiting for its tasks before the next is submitted: one round of a short pattern lasts
  // a few microseconds, less than the machine's noise.
  std::function<double(int workers, long n, long rounds)> generations;

  // On one array of 1024 doubles: one writer, then n readers, then n writers that overwrite the
  // whole array, each reader and writer busy-waiting `task_us` microseconds; the writers have a
  // higher priority (a producer on the critical path) where the system has priorities. With
  // `overwrite`, the writers declare that they do not read the old contents (Versa's write_only,
  // OpenMP's depend(out)); otherwise they are read-modify-writes. Returns the seconds from the
  // first submission until the last writer ended.
  std::function<double(int workers, long n, double task_us, bool overwrite)>
      overwrite_after_readers;

  // Add-heavy reduction: `handles` arrays of `elements` doubles, all zero; `tasks` tasks, task i
  // busy-waiting `task_us` microseconds and then adding reduction_contribution(i) to every element
  // of array i % handles, each system with its own reduction or commutative access. The clock
  // stops once the sums are readable in the arrays' home memory (partial results merged); after
  // it, check_reduction() verifies every array.
  std::function<double(int workers, long tasks, int handles, long elements, double task_us)>
      reduction;

  // Two threads passing a cache line back and forth `rounds` times (no runtime; only `threads`
  // has it): the machine's cost of the transfers every hand-off between cores pays.
  std::function<double(long rounds)> round_trip;
};

// What task i of the reduction pattern adds to each element of its array: a small integer, so
// that every sum is exact in a double whatever the order of the additions.
inline double reduction_contribution(long i) { return static_cast<double>(i % 7 + 1); }

// Verifies that the `elements` values at `sums` (array `handle` of `handles`) all equal the exact
// sum of the contributions of the tasks mapped to that array. On a mismatch it names `system` and
// the first wrong element on stderr and exits with status 1: a wrong sum must not yield a figure.
void check_reduction(const std::string& system, const double* sums, long elements, int handle,
                     int handles, long tasks);

// Each returns the systems it provides (empty vector if the library is not available).
std::vector<System> versa_systems();
// starpu-lws, starpu-eager, starpu-dmda; starpu-redux, starpu-commute (reduction pattern only)
std::vector<System> starpu_systems();
std::vector<System> openmp_systems();  // openmp
std::vector<System> tbb_systems();     // tbb
// threads: the efficiency pattern with no runtime (plain threads and an atomic counter), its
// bound on this machine.
std::vector<System> thread_systems();

}  // namespace bench
