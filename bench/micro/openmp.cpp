// The micro-benchmark patterns on OpenMP tasks (libgomp with g++).
//
// Every pattern runs in `#pragma omp parallel num_threads(workers)` with dynamic adjustment off, so
// exactly `workers` threads execute tasks: one thread enters the `single` region and submits every
// task with `#pragma omp task` (data dependencies as `depend` clauses), the others execute tasks
// while they wait at the single's implicit barrier, and the submitter joins in at `taskwait`.
//
// Timing: the clock starts inside the single region, right before the first task is created, and
// stops right after the `taskwait` that follows the last one. Starting the team (thread creation on
// the first call, waking the pooled threads later) is thus runtime set-up and is not timed, like
// the start-up of the other systems; tearing the team down is not timed either.
//
// libgomp behaviour that shows in the results: while more than 64 tasks per thread are ready or
// running, a new task is not queued but run at once by the submitter (it is "undeferred"; the
// submitter first waits for its dependences, if any). With one thread that is nearly every task of
// spawn and independent. Tasks still waiting for dependences do not count towards that limit.
//
// Built without OpenMP support, openmp_systems() returns no system.
#include "systems.hpp"

#ifdef _OPENMP

#include <malloc.h>
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/harness.hpp"

namespace bench {
namespace {

// Size of the data pool of the `dependencies` pattern (see systems.hpp).
constexpr long kPoolSize = 1024;

// g++ drops a `#pragma omp task` whose body is empty and creates no task at all. Empty tasks call
// this instead: a compiler-only fence that emits no instruction but keeps the task a real task,
// as it is in the other systems.
inline void empty_body() { std::atomic_signal_fence(std::memory_order_seq_cst); }

// Pointers below that appear only in depend clauses are marked [[maybe_unused]]: g++ 12 does not
// count a use in a depend clause and would warn.

// Every pattern enters its parallel region through this, and checks afterwards with
// check_team_size() that the region really had `workers` threads (OMP_THREAD_LIMIT, for instance,
// could silently cap it).
void prepare_team(int workers) {
  if (workers < 1) throw std::invalid_argument("openmp: workers must be at least 1");
  omp_set_dynamic(0);
}

void check_team_size(int workers, int team_size) {
  if (team_size != workers) {
    throw std::runtime_error("openmp: asked for " + std::to_string(workers) +
                             " threads, the parallel region had " + std::to_string(team_size));
  }
}

double spawn(int workers, long tasks) {
  prepare_team(workers);
  double seconds = 0;
  int team_size = 0;
#pragma omp parallel num_threads(workers) default(none) shared(tasks, seconds, team_size)
#pragma omp single
  {
    team_size = omp_get_num_threads();
    const auto start = Clock::now();
    for (long i = 0; i < tasks; ++i) {
#pragma omp task default(none)
      empty_body();
    }
#pragma omp taskwait
    seconds = seconds_since(start);
  }
  check_team_size(workers, team_size);
  return seconds;
}

double independent(int workers, long tasks, double task_us) {
  prepare_team(workers);
  double seconds = 0;
  int team_size = 0;
#pragma omp parallel num_threads(workers) default(none) shared(tasks, task_us, seconds, team_size)
#pragma omp single
  {
    team_size = omp_get_num_threads();
    const auto start = Clock::now();
    for (long i = 0; i < tasks; ++i) {
#pragma omp task default(none) firstprivate(task_us)
      busy_wait_us(task_us);
    }
#pragma omp taskwait
    seconds = seconds_since(start);
  }
  check_team_size(workers, team_size);
  return seconds;
}

// Tile (m, n) of the tiles x tiles matrix is element m * tiles + n of a char array; the tasks
// name those elements in their depend clauses, the array itself is never touched.
double cholesky_dag(int workers, int tiles, double task_us) {
  prepare_team(workers);
  std::vector<char> matrix(static_cast<size_t>(tiles) * static_cast<size_t>(tiles));
  [[maybe_unused]] char* const a = matrix.data();
  const long t = tiles;
  double seconds = 0;
  int team_size = 0;
#pragma omp parallel num_threads(workers) default(none) shared(a, t, task_us, seconds, team_size)
#pragma omp single
  {
    team_size = omp_get_num_threads();
    const auto start = Clock::now();
    for (long k = 0; k < t; ++k) {
      // potrf(k)
#pragma omp task default(none) firstprivate(task_us) depend(inout : a[k * t + k])
      busy_wait_us(task_us);
      // trsm(m, k)
      for (long m = k + 1; m < t; ++m) {
#pragma omp task default(none) firstprivate(task_us) depend(in                           \
                                                            : a[k * t + k]) depend(inout \
                                                                                   : a[m * t + k])
        busy_wait_us(task_us);
      }
      for (long m = k + 1; m < t; ++m) {
        // syrk(m, k)
#pragma omp task default(none) firstprivate(task_us) depend(in                           \
                                                            : a[m * t + k]) depend(inout \
                                                                                   : a[m * t + m])
        busy_wait_us(task_us);
        // gemm(m, j, k)
        for (long j = k + 1; j < m; ++j) {
#pragma omp task default(none) firstprivate(task_us) depend(in                            \
                                                            : a[m * t + k], a[j * t + k]) \
    depend(inout                                                                          \
           : a[m * t + j])
          busy_wait_us(task_us);
        }
      }
    }
#pragma omp taskwait
    seconds = seconds_since(start);
  }
  check_team_size(workers, team_size);
  return seconds;
}

// Task i names its `handles` pool items with an OpenMP 5.0 depend iterator, so the number of items
// is a run-time value and each task gets exactly `handles` dependences. With handles == 0 the tasks
// carry no depend clause at all (the baseline).
double dependencies(int workers, long tasks, int handles) {
  prepare_team(workers);
  if (handles < 0 || handles > kPoolSize) {
    throw std::invalid_argument("openmp: handles must be within [0, pool size]");
  }
  std::vector<char> pool_storage(kPoolSize);
  [[maybe_unused]] char* const pool = pool_storage.data();
  const long h = handles;
  double seconds = 0;
  int team_size = 0;
#pragma omp parallel num_threads(workers) default(none) shared(pool, tasks, h, seconds, team_size)
#pragma omp single
  {
    team_size = omp_get_num_threads();
    const auto start = Clock::now();
    if (h == 0) {
      for (long i = 0; i < tasks; ++i) {
#pragma omp task default(none)
        empty_body();
      }
    } else {
      for (long i = 0; i < tasks; ++i) {
#pragma omp task default(none) depend(iterator(long j = 0 : h), in : pool[(i * h + j) % kPoolSize])
        empty_body();
      }
    }
#pragma omp taskwait
    seconds = seconds_since(start);
  }
  check_team_size(workers, team_size);
  return seconds;
}

// All tasks must be pending before any of them runs. The gate is a detached task (OpenMP 5.0
// `detach`): its body is empty, but it only completes when the submitter fulfils its event after
// the last submission, so the tasks that depend on it cannot start earlier. Unlike a gate task
// that spins on a flag, this cannot deadlock with one thread, and libgomp does not count tasks
// blocked on dependences towards its limit of 64 queued tasks per thread (beyond which it would
// run new tasks immediately on the submitter).
//
// libgomp finds the dependences of a new depend(in: x) task by scanning every earlier dependence
// on x that is still pending, so n tasks all reading one gate address cost O(n^2) to submit (4e4
// tasks already take seconds, 1e6 would take most of an hour). The gate task therefore writes one
// gate address per kReadersPerGate tasks (a depend iterator) and each task reads the address of its
// group: still one gate, opened by one event, with bounded submission work per task.
constexpr long kReadersPerGate = 32;

TaskCountResult task_count(int workers, long tasks) {
  prepare_team(workers);
  const long gate_count = tasks / kReadersPerGate + 1;
  std::vector<char> gate_storage(static_cast<size_t>(gate_count));
  [[maybe_unused]] char* const gate = gate_storage.data();
  TaskCountResult result;
  int team_size = 0;
#pragma omp parallel num_threads(workers) default(none) \
    shared(gate, gate_count, tasks, result, team_size)
#pragma omp single
  {
    team_size = omp_get_num_threads();
    const double heap_before = heap_in_use();
    const auto start = Clock::now();
    omp_event_handle_t gate_open;
#pragma omp task default(none) detach(gate_open) depend(iterator(long g = 0     \
                                                                 : gate_count), \
                                                        out                     \
                                                        : gate[g])
    empty_body();
    for (long i = 0; i < tasks; ++i) {
#pragma omp task default(none) depend(in : gate[i / kReadersPerGate])
      busy_wait_us(1.0);
    }
    // Everything is submitted and nothing but the gate can have run yet. The heap probe itself
    // is not part of the measured time.
    const auto probe_start = Clock::now();
    const double heap_pending = heap_in_use();
    const double probe_seconds = seconds_since(probe_start);
    omp_fulfill_event(gate_open);
#pragma omp taskwait
    result.seconds = seconds_since(start) - probe_seconds;
    if (tasks > 0)
      result.bytes_per_pending_task = (heap_pending - heap_before) / static_cast<double>(tasks);
  }
  check_team_size(workers, team_size);
  return result;
}

// One item: a writer, n readers, n writers, submitted in that order; `rounds` times, each ended
// by a taskwait.
double generations(int workers, long n, long rounds) {
  prepare_team(workers);
  char item = 0;
  [[maybe_unused]] char* const x = &item;
  double seconds = 0;
  int team_size = 0;
#pragma omp parallel num_threads(workers) default(none) shared(x, n, rounds, seconds, team_size)
#pragma omp single
  {
    team_size = omp_get_num_threads();
    const auto start = Clock::now();
    for (long round = 0; round < rounds; ++round) {
#pragma omp task default(none) depend(inout : x[0])
      empty_body();
      for (long i = 0; i < n; ++i) {
#pragma omp task default(none) depend(in : x[0])
        empty_body();
      }
      for (long i = 0; i < n; ++i) {
#pragma omp task default(none) depend(inout : x[0])
        empty_body();
      }
#pragma omp taskwait
    }
    seconds = seconds_since(start);
  }
  check_team_size(workers, team_size);
  return seconds;
}

// The writers' dependence is `out` with overwrite (OpenMP orders it after the readers all the
// same) and `inout` without; priority(1) takes effect where OMP_MAX_TASK_PRIORITY allows it.
double overwrite_after_readers(int workers, long n, double task_us, bool overwrite) {
  prepare_team(workers);
  std::vector<double> values(1024, 0.0);
  double* const x = values.data();
  std::atomic<std::int64_t> last_writer_end{0};
  Clock::time_point start;
  int team_size = 0;
  auto overwrite_all = [x, task_us, &last_writer_end] {
    busy_wait_us(task_us);
    for (int i = 0; i < 1024; ++i) x[i] = 1.0;
    const std::int64_t now = Clock::now().time_since_epoch().count();
    std::int64_t seen = last_writer_end.load();
    while (now > seen && !last_writer_end.compare_exchange_weak(seen, now)) {
    }
  };
#pragma omp parallel num_threads(workers) default(none) \
    shared(x, n, task_us, overwrite, start, team_size, overwrite_all)
#pragma omp single
  {
    team_size = omp_get_num_threads();
    start = Clock::now();
#pragma omp task default(none) shared(overwrite_all) depend(inout : x[0])
    overwrite_all();
    for (long i = 0; i < n; ++i) {
#pragma omp task default(none) firstprivate(task_us) shared(x) depend(in : x[0])
      {
        busy_wait_us(task_us);
        if (x[0] < 0) std::abort();
      }
    }
    for (long i = 0; i < n; ++i) {
      if (overwrite) {
#pragma omp task default(none) shared(overwrite_all) depend(out : x[0]) priority(1)
        overwrite_all();
      } else {
#pragma omp task default(none) shared(overwrite_all) depend(inout : x[0]) priority(1)
        overwrite_all();
      }
    }
#pragma omp taskwait
  }
  check_team_size(workers, team_size);
  if (values[0] != 1.0) {
    std::fprintf(stderr, "overwrite_after_readers: openmp left a wrong value\n");
    std::exit(1);
  }
  return std::chrono::duration<double>(Clock::time_point(Clock::duration(last_writer_end)) - start)
      .count();
}

// Reduction: an OpenMP 5.0 task reduction. The arrays lie end to end in one buffer, the reduction
// variable of a taskgroup (task_reduction) and of every add task (in_reduction): each thread that
// runs add tasks gets a private copy of the whole buffer, initialised to zero, into whose slice
// for the task's array the task adds; the copies are summed into the buffer as the taskgroup
// ends. A task cannot pick its reduction variable at run time, hence one buffer for all arrays.
double reduction(int workers, long tasks, int handles, long elements, double task_us) {
  prepare_team(workers);
  if (handles < 1 || elements < 1) {
    throw std::invalid_argument("openmp: reduction needs at least one handle and one element");
  }
  const long size = handles * elements;
  std::vector<double> storage(static_cast<size_t>(size));
  double* const sums = storage.data();
  const long h = handles;
  double seconds = 0;
  int team_size = 0;
#pragma omp parallel num_threads(workers) default(none) \
    shared(sums, size, tasks, h, elements, task_us, seconds, team_size)
#pragma omp single
  {
    team_size = omp_get_num_threads();
    const auto start = Clock::now();
#pragma omp taskgroup task_reduction(+ : sums [0:size])
    {
      for (long i = 0; i < tasks; ++i) {
        const double contribution = reduction_contribution(i);
#pragma omp task default(none) firstprivate(i, h, elements, task_us, contribution) \
    in_reduction(+ : sums[0 : size])
        {
          busy_wait_us(task_us);
          double* const slice = sums + (i % h) * elements;
          for (long e = 0; e < elements; ++e) slice[e] += contribution;
        }
      }
    }
    seconds = seconds_since(start);
  }
  check_team_size(workers, team_size);
  for (int k = 0; k < handles; ++k)
    check_reduction("openmp", sums + k * elements, elements, k, handles, tasks);
  return seconds;
}

}  // namespace

std::vector<System> openmp_systems() {
  System system;
  system.name = "openmp";
  system.spawn = spawn;
  system.independent = independent;
  system.cholesky_dag = cholesky_dag;
  system.dependencies = dependencies;
  system.task_count = task_count;
  system.generations = generations;
  system.overwrite_after_readers = overwrite_after_readers;
  system.reduction = reduction;
  return {system};
}

}  // namespace bench

#else  // !_OPENMP

namespace bench {
std::vector<System> openmp_systems() { return {}; }
}  // namespace bench

#endif
