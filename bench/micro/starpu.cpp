// The micro-benchmark patterns on StarPU, once per scheduling policy: "lws" (locality work
// stealing), "eager" (one central queue) and "dmda" (performance-model driven).
// All three run the same code; only starpu_conf::sched_policy_name differs, plus performance
// models on the codelets for dmda, the only one of the three that reads them.
//
// The reduction pattern has two systems of its own, one per way StarPU offers of adding into a
// datum: "starpu-redux" (STARPU_REDUX, per-worker copies merged by a reduction codelet) and
// "starpu-commute" (STARPU_RW | STARPU_COMMUTE, the adds run one at a time in any order).
//
// Every run is a full starpu_init .. starpu_shutdown cycle so that each measurement starts from a
// fresh runtime with exactly `workers` CPU workers; data registration happens before the clock
// starts and unregistration after it stops, so the clock sees submission + execution only.
#include <malloc.h>
#include <starpu.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "common/harness.hpp"
#include "common/starpu_support.hpp"
#include "systems.hpp"

namespace bench {
namespace {

struct Policy {
  const char* system;  // name reported by the benchmark
  const char* sched;   // StarPU scheduler name
  bool uses_models;    // whether the scheduler reads codelet performance models
};

constexpr Policy kPolicies[] = {
    {"starpu-lws", "lws", false},
    {"starpu-eager", "eager", false},
    {"starpu-dmda", "dmda", true},
};

// Both reduction systems run on lws, the policy of the starpu-lws column: like Versa's workers it
// keeps ready tasks in per-worker queues and steals, and unlike dmda it needs no calibrated
// performance model for the add tasks. Only the access mode of the add tasks differs.
struct ReductionVariant {
  const char* system;  // name reported by the benchmark
  bool redux;          // STARPU_REDUX; otherwise STARPU_RW | STARPU_COMMUTE
};

// The sessions of both variants (they report the variant's name, not the policy's).
constexpr Policy kReductionPolicy = {"starpu-lws", "lws", false};

constexpr ReductionVariant kReductionVariants[] = {
    {"starpu-redux", true},
    {"starpu-commute", false},
};

constexpr starpu_data_access_mode kCommute =
    static_cast<starpu_data_access_mode>(STARPU_RW | STARPU_COMMUTE);

// Size of the data pool of the dependencies pattern (see systems.hpp).
constexpr long kPoolSize = 1024;

// ---- Task bodies

void empty_body(void* /*buffers*/[], void* /*cl_arg*/) {}

// cl_arg points at the task's duration in microseconds (a double owned by the pattern function).
void busy_body(void* /*buffers*/[], void* cl_arg) {
  busy_wait_us(*static_cast<const double*>(cl_arg));
}

// The doubles of a buffer registered with starpu_vector_data_register.
std::span<double> vector_of(void* buffer) {
  const auto* v = static_cast<const starpu_vector_interface*>(buffer);
  return {reinterpret_cast<double*>(v->ptr), v->nx};
}

// The argument of an add task of the reduction pattern (owned by the pattern function).
struct AddArgs {
  double task_us;
  double contribution;
};

void add_body(void* buffers[], void* cl_arg) {
  const auto& args = *static_cast<const AddArgs*>(cl_arg);
  busy_wait_us(args.task_us);
  for (double& x : vector_of(buffers[0])) x += args.contribution;
}

// The reduction methods of STARPU_REDUX: a per-worker copy starts at zero, and copies are merged
// by adding buffers[1] into buffers[0].
void sum_init_body(void* buffers[], void* /*cl_arg*/) {
  for (double& x : vector_of(buffers[0])) x = 0;
}

void sum_merge_body(void* buffers[], void* /*cl_arg*/) {
  const std::span<double> into = vector_of(buffers[0]);
  const std::span<const double> from = vector_of(buffers[1]);
  for (std::size_t e = 0; e < into.size(); ++e) into[e] += from[e];
}

// ---- Performance models (read by dmda only)

// History models are indexed by a footprint, by default a hash of the data sizes only. Busy tasks
// of different durations would then share one history, so the duration is hashed in as well.
uint32_t busy_footprint(starpu_task* task) {
  return starpu_hash_crc32c_be_n(task->cl_arg, sizeof(double), starpu_task_data_footprint(task));
}

// StarPU resets a model's private state when it shuts down, so one zero-initialised object per
// model serves every init/shutdown cycle of the process.
struct Models {
  starpu_perfmodel empty{}, busy{}, access{}, potrf{}, trsm{}, syrk{}, gemm{};

  Models() {
    history(empty, "versa_bench_empty", false);
    history(busy, "versa_bench_busy", true);
    history(access, "versa_bench_access", false);
    history(potrf, "versa_bench_potrf", true);
    history(trsm, "versa_bench_trsm", true);
    history(syrk, "versa_bench_syrk", true);
    history(gemm, "versa_bench_gemm", true);
  }

  static void history(starpu_perfmodel& model, const char* symbol, bool busy_body) {
    model.type = STARPU_HISTORY_BASED;
    model.symbol = symbol;
    if (busy_body) model.footprint = busy_footprint;
  }
};

Models& models() {
  static Models instance;
  return instance;
}

// ---- Runtime session

// One StarPU lifetime: starpu_init on construction, unregistration of the session's data and
// starpu_shutdown on destruction. Also owns the codelets, which carry performance models only for
// policies that use them (elsewhere a model would only add timing and calibration bookkeeping).
class Session {
 public:
  Session(const Policy& policy, int workers) {
    start_starpu(policy.sched, workers);

    Models& pm = models();
    const auto model = [&](starpu_perfmodel& m) { return policy.uses_models ? &m : nullptr; };
    empty = make_codelet(empty_body, 0, {}, model(pm.empty));
    busy = make_codelet(busy_body, 0, {}, model(pm.busy));
    access = make_codelet(empty_body, STARPU_VARIABLE_NBUFFERS, {}, model(pm.access));
    potrf = make_codelet(busy_body, 1, {STARPU_RW}, model(pm.potrf));
    trsm = make_codelet(busy_body, 2, {STARPU_R, STARPU_RW}, model(pm.trsm));
    syrk = make_codelet(busy_body, 2, {STARPU_R, STARPU_RW}, model(pm.syrk));
    gemm = make_codelet(busy_body, 3, {STARPU_R, STARPU_R, STARPU_RW}, model(pm.gemm));
    add_redux = make_codelet(add_body, 1, {STARPU_REDUX}, nullptr);
    add_commute = make_codelet(add_body, 1, {kCommute}, nullptr);
    // StarPU 1.3 asserts that the merge codelet's destination is exactly STARPU_RW (its
    // starpu_data.h asks for STARPU_RW | STARPU_COMMUTE, which later versions accept).
    sum_merge = make_codelet(sum_merge_body, 2, {STARPU_RW, STARPU_R}, nullptr);
    sum_init = make_codelet(sum_init_body, 1, {STARPU_W}, nullptr);
  }

  ~Session() {
    starpu_task_wait_for_all();  // only matters when a pattern bailed out with tasks in flight
    for (const auto handle : handles_) starpu_data_unregister(handle);
    starpu_shutdown();
  }

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Registers one small variable, used purely as a dependency-tracking token.
  starpu_data_handle_t register_item() {
    auto& value = storage_.emplace_back(0.0);
    starpu_data_handle_t handle = nullptr;
    starpu_variable_data_register(&handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&value),
                                  sizeof(value));
    handles_.push_back(handle);
    return handle;
  }

  // Registers `count` doubles at `values`; unregistering it (on destruction) brings the data home.
  starpu_data_handle_t register_vector(double* values, long count) {
    starpu_data_handle_t handle = nullptr;
    starpu_vector_data_register(&handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(values),
                                static_cast<uint32_t>(count), sizeof(double));
    handles_.push_back(handle);
    return handle;
  }

  std::vector<starpu_data_handle_t> register_items(long n) {
    std::vector<starpu_data_handle_t> items;
    items.reserve(static_cast<size_t>(n));
    for (long i = 0; i < n; ++i) items.push_back(register_item());
    return items;
  }

  starpu_codelet empty{}, busy{}, access{}, potrf{}, trsm{}, syrk{}, gemm{};
  // The reduction pattern. Members, so that they outlive the merges that unregistering runs.
  starpu_codelet add_redux{}, add_commute{}, sum_merge{}, sum_init{};

 private:
  std::deque<double> storage_;  // registered memory; a deque keeps addresses stable as it grows
  std::vector<starpu_data_handle_t> handles_;
};

// ---- Submission

// A detached task (StarPU's default for starpu_task_create) that destroys itself after running.
starpu_task* new_task(starpu_codelet* cl, const double* task_us, int priority) {
  starpu_task* task = starpu_task_create();
  task->cl = cl;
  if (task_us != nullptr) {
    task->cl_arg = const_cast<double*>(task_us);  // read only; outlives the task, never freed
    task->cl_arg_size = sizeof(double);
  }
  task->priority = priority;
  return task;
}

// For codelets with a fixed number of buffers whose access modes are in the codelet.
void submit(starpu_codelet* cl, const double* task_us = nullptr, int priority = STARPU_DEFAULT_PRIO,
            std::initializer_list<starpu_data_handle_t> handles = {}) {
  starpu_task* task = new_task(cl, task_us, priority);
  int i = 0;
  for (const auto handle : handles) task->handles[i++] = handle;
  check(starpu_task_submit(task), "starpu_task_submit");
}

// For the variable-buffer `access` codelet: `count` handles, all accessed with `mode`. Up to
// STARPU_NMAXBUFS fit in the task itself; beyond that StarPU takes malloc'ed arrays, which it frees
// when the task is destroyed.
void submit_access(starpu_codelet* cl, const starpu_data_handle_t* handles, int count,
                   starpu_data_access_mode mode) {
  starpu_task* task = new_task(cl, nullptr, STARPU_DEFAULT_PRIO);
  task->nbuffers = count;
  starpu_data_handle_t* task_handles = task->handles;
  starpu_data_access_mode* task_modes = task->modes;
  if (count > STARPU_NMAXBUFS) {
    task_handles = task->dyn_handles =
        static_cast<starpu_data_handle_t*>(std::malloc(sizeof(starpu_data_handle_t) * count));
    task_modes = task->dyn_modes =
        static_cast<starpu_data_access_mode*>(std::malloc(sizeof(starpu_data_access_mode) * count));
    if (task_handles == nullptr || task_modes == nullptr) {
      starpu_task_destroy(task);  // frees whichever array was allocated
      throw std::bad_alloc();
    }
  }
  for (int j = 0; j < count; ++j) {
    task_handles[j] = handles[j];
    task_modes[j] = mode;
  }
  check(starpu_task_submit(task), "starpu_task_submit");
}

// An add task of the reduction pattern on `sum`.
void submit_add(starpu_codelet* cl, const AddArgs* args, starpu_data_handle_t sum) {
  starpu_task* task = new_task(cl, nullptr, STARPU_DEFAULT_PRIO);
  task->cl_arg = const_cast<AddArgs*>(args);  // read only; outlives the task, never freed
  task->cl_arg_size = sizeof(AddArgs);
  task->handles[0] = sum;
  check(starpu_task_submit(task), "starpu_task_submit");
}

void wait_all() { check(starpu_task_wait_for_all(), "starpu_task_wait_for_all"); }

// ---- Patterns

double spawn(const Policy& policy, int workers, long tasks) {
  Session session(policy, workers);
  const auto start = Clock::now();
  for (long i = 0; i < tasks; ++i) submit(&session.empty);
  wait_all();
  return seconds_since(start);
}

double independent(const Policy& policy, int workers, long tasks, double task_us) {
  Session session(policy, workers);
  const auto start = Clock::now();
  for (long i = 0; i < tasks; ++i) submit(&session.busy, &task_us);
  wait_all();
  return seconds_since(start);
}

double cholesky_dag(const Policy& policy, int workers, int tiles, double task_us) {
  Session session(policy, workers);
  // One token per lower-triangular tile (m, n), n <= m.
  const auto tile_handles = session.register_items(static_cast<long>(tiles) * (tiles + 1) / 2);
  const auto tile = [&](int m, int n) {
    return tile_handles[static_cast<size_t>(m) * (m + 1) / 2 + static_cast<size_t>(n)];
  };

  // StarPU's own Cholesky examples raise the priority of the critical path: each potrf, and the
  // trsm and syrk that feed the next potrf. Schedulers without priority support ignore it.
  const int high = STARPU_MAX_PRIO;
  const int normal = STARPU_DEFAULT_PRIO;

  const auto start = Clock::now();
  for (int k = 0; k < tiles; ++k) {
    submit(&session.potrf, &task_us, high, {tile(k, k)});
    for (int m = k + 1; m < tiles; ++m)
      submit(&session.trsm, &task_us, m == k + 1 ? high : normal, {tile(k, k), tile(m, k)});
    for (int m = k + 1; m < tiles; ++m) {
      submit(&session.syrk, &task_us, m == k + 1 ? high : normal, {tile(m, k), tile(m, m)});
      for (int j = k + 1; j < m; ++j)
        submit(&session.gemm, &task_us, normal, {tile(m, k), tile(j, k), tile(m, j)});
    }
  }
  wait_all();
  return seconds_since(start);
}

double dependencies(const Policy& policy, int workers, long tasks, int handles) {
  if (handles < 0 || handles > kPoolSize)
    throw std::invalid_argument("dependencies: handles must be in [0, 1024]");
  Session session(policy, workers);
  const auto pool = session.register_items(kPoolSize);
  std::vector<starpu_data_handle_t> reads(static_cast<size_t>(handles));

  const auto start = Clock::now();
  for (long i = 0; i < tasks; ++i) {
    for (int j = 0; j < handles; ++j)
      reads[j] = pool[static_cast<size_t>((i * handles + j) % kPoolSize)];
    submit_access(&session.access, reads.data(), handles, STARPU_R);
  }
  wait_all();
  return seconds_since(start);
}

// The gate is starpu_pause(): workers take no task until starpu_resume(), so every task is pending
// (submitted, queued in the scheduler) when the last submission returns.
class Gate {
 public:
  Gate() { starpu_pause(); }
  ~Gate() { open(); }  // StarPU cannot wait for tasks or shut down while paused
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  void open() {
    if (closed_) starpu_resume();
    closed_ = false;
  }

 private:
  bool closed_ = true;
};

TaskCountResult task_count(const Policy& policy, int workers, long tasks) {
  Session session(policy, workers);
  const double task_us = 1.0;
  Gate gate;
  const double heap_before = heap_in_use();

  const auto start = Clock::now();
  for (long i = 0; i < tasks; ++i) submit(&session.busy, &task_us);
  const double heap_pending = heap_in_use();
  gate.open();
  wait_all();

  TaskCountResult result;
  result.seconds = seconds_since(start);
  if (tasks > 0 && heap_pending >= heap_before)
    result.bytes_per_pending_task =
        static_cast<double>(heap_pending - heap_before) / static_cast<double>(tasks);
  return result;
}

double generations(const Policy& policy, int workers, long n, long rounds) {
  Session session(policy, workers);
  const starpu_data_handle_t item = session.register_item();

  const auto start = Clock::now();
  for (long round = 0; round < rounds; ++round) {
    submit_access(&session.access, &item, 1, STARPU_RW);
    for (long i = 0; i < n; ++i) submit_access(&session.access, &item, 1, STARPU_R);
    for (long i = 0; i < n; ++i) submit_access(&session.access, &item, 1, STARPU_RW);
    wait_all();
  }
  return seconds_since(start);
}

// StarPU merges the per-worker copies of a STARPU_REDUX datum lazily, at its next other access:
// the read acquisitions before the clock stops perform (and time) that merge, so that every
// system's figure includes combining the contributions.
double reduction(const ReductionVariant& variant, int workers, long tasks, int handles,
                 long elements, double task_us) {
  std::vector<std::vector<double>> sums(static_cast<size_t>(handles),
                                        std::vector<double>(static_cast<size_t>(elements)));
  AddArgs args[7];  // task i adds reduction_contribution(i), which repeats every 7 tasks
  for (long k = 0; k < 7; ++k) args[k] = {task_us, reduction_contribution(k)};
  double seconds = 0;
  {
    Session session(kReductionPolicy, workers);
    std::vector<starpu_data_handle_t> handle;
    for (auto& values : sums) {
      handle.push_back(session.register_vector(values.data(), elements));
      if (variant.redux)
        starpu_data_set_reduction_methods(handle.back(), &session.sum_merge, &session.sum_init);
    }
    starpu_codelet* add = variant.redux ? &session.add_redux : &session.add_commute;

    const auto start = Clock::now();
    for (long i = 0; i < tasks; ++i)
      submit_add(add, &args[i % 7], handle[static_cast<size_t>(i % handles)]);
    wait_all();
    for (const auto h : handle) {
      check(starpu_data_acquire(h, STARPU_R), "starpu_data_acquire");
      starpu_data_release(h);
    }
    seconds = seconds_since(start);
  }  // the session unregisters the handles, bringing the sums home, and shuts StarPU down
  for (int h = 0; h < handles; ++h)
    check_reduction(variant.system, sums[static_cast<size_t>(h)].data(), elements, h, handles,
                    tasks);
  return seconds;
}

System make_system(const Policy& policy) {
  System system;
  system.name = policy.system;
  system.spawn = [&policy](int workers, long tasks) { return spawn(policy, workers, tasks); };
  system.independent = [&policy](int workers, long tasks, double task_us) {
    return independent(policy, workers, tasks, task_us);
  };
  system.cholesky_dag = [&policy](int workers, int tiles, double task_us) {
    return cholesky_dag(policy, workers, tiles, task_us);
  };
  system.dependencies = [&policy](int workers, long tasks, int handles) {
    return dependencies(policy, workers, tasks, handles);
  };
  system.task_count = [&policy](int workers, long tasks) {
    return task_count(policy, workers, tasks);
  };
  system.generations = [&policy](int workers, long n, long rounds) {
    return generations(policy, workers, n, rounds);
  };
  return system;
}

}  // namespace

std::vector<System> starpu_systems() {
  std::vector<System> systems;
  for (const Policy& policy : kPolicies) systems.push_back(make_system(policy));
  for (const ReductionVariant& variant : kReductionVariants) {
    System system;
    system.name = variant.system;
    system.reduction = [&variant](int workers, long tasks, int handles, long elements,
                                  double task_us) {
      return reduction(variant, workers, tasks, handles, elements, task_us);
    };
    systems.push_back(system);
  }
  return systems;
}

}  // namespace bench
