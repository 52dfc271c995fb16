// Helpers shared by the benchmarks that drive StarPU.
#pragma once

#include <starpu.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

// Throws when a StarPU call returned an error code.
inline void check(int ret, const char* what) {
  if (ret != 0)
    throw std::runtime_error(std::string("StarPU: ") + what + " failed (" + std::to_string(ret) +
                             ")");
}

// Keeps StarPU quiet and confines its on-disk state (bus and performance-model calibration files)
// to a directory under the system's temporary directory rather than $HOME. Values already present
// in the environment win, so a user can still point StarPU elsewhere or turn the messages back on.
inline void prepare_starpu_environment() {
  static const bool prepared = [] {
    ::setenv("STARPU_SILENT", "1", 0);
    std::error_code ec;
    const auto home = std::filesystem::temp_directory_path(ec) / "versa-bench-starpu";
    std::filesystem::create_directories(home, ec);
    ::setenv("STARPU_HOME", home.c_str(), 0);
    return true;
  }();
  (void)prepared;
}

// The configuration of a StarPU with `workers` CPU workers and the scheduling policy `scheduler`,
// and nothing else: no GPU or other device, not overridable by STARPU_SCHED / STARPU_NCPU, the
// host program's signal handling left alone. `policy_init`, when given, configures the policy of
// each scheduling context as it starts (heteroprio's buckets).
inline starpu_conf cpu_only_conf(const char* scheduler, int workers,
                                 void (*policy_init)(unsigned) = nullptr) {
  prepare_starpu_environment();
  starpu_conf conf;
  check(starpu_conf_init(&conf), "starpu_conf_init");
  conf.sched_policy_name = scheduler;
  conf.precedence_over_environment_variables = 1;
  conf.ncpus = workers;
  conf.ncuda = 0;
  conf.nopencl = 0;
  conf.nmic = 0;
  conf.nmpi_ms = 0;
  conf.catch_signals = 0;
  conf.sched_policy_init = policy_init;
  return conf;
}

// cpu_only_conf plus one CUDA worker per GPU StarPU finds (a StarPU built with CUDA), each with
// a thread of its own beside the `workers` CPU workers.
inline starpu_conf cpu_cuda_conf(const char* scheduler, int workers) {
  starpu_conf conf = cpu_only_conf(scheduler, workers);
  conf.ncuda = -1;
  return conf;
}

// Starts StarPU as cpu_only_conf describes.
inline void start_starpu(const char* scheduler, int workers,
                         void (*policy_init)(unsigned) = nullptr) {
  starpu_conf conf = cpu_only_conf(scheduler, workers, policy_init);
  check(starpu_init(&conf), "starpu_init");
}

// A CPU-only codelet with `nbuffers` buffers (or STARPU_VARIABLE_NBUFFERS) accessed in `modes`.
inline starpu_codelet make_codelet(starpu_cpu_func_t body, int nbuffers,
                                   const std::vector<starpu_data_access_mode>& modes,
                                   starpu_perfmodel* model) {
  starpu_codelet cl;
  starpu_codelet_init(&cl);
  cl.where = STARPU_CPU;
  cl.cpu_funcs[0] = body;
  cl.nbuffers = nbuffers;
  int i = 0;
  for (const auto mode : modes) cl.modes[i++] = mode;
  cl.model = model;
  return cl;
}

}  // namespace bench
