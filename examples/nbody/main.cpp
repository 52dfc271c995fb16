// Command-line tool: run the Lennard-Jones n-body simulation of nbody.hpp with the force
// accesses as reductions (`add`) or as plain `write`s, and report steps per second, bytes moved
// per step, tasks and kernel time per kernel and device (the runtime's task statistics) and, with
// --check, the error against the sequential reference.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "nbody.hpp"
#include "options.hpp"
#include "result_line.hpp"
#include "run_report.hpp"

namespace {

struct Options {
  long particles = 8192;
  long blocks = 4;
  int steps = 10;
  nbody::ForceAccess mode = nbody::ForceAccess::add;
  example::Devices devices;
  int workers = 0;
  int repeat = 1;
  bool check = false;
  std::string trace;
};

// Binds the options to `o`.
void add_options(example::OptionParser& parser, Options& o) {
  nbody::add_system_options(parser, o.particles, o.blocks, o.steps);
  nbody::add_mode_option(parser, o.mode);
  example::add_devices_option(parser, o.devices);
  example::add_workers_option(parser, o.workers);
  example::add_repeat_option(parser, o.repeat, "run the simulation R times");
  parser.flag("--check", o.check,
              "compare the final positions, velocities and forces with a sequential run\n"
              "and say whether the relative error is at most 1e-12");
  example::add_trace_option(parser, o.trace, "all repetitions");
}

int run(const Options& o) {
  versa::Config config = example::runtime_config(o.devices, o.workers, o.trace);
  config.task_statistics = true;
  // One runtime for every repetition: its performance model calibrates on the first.
  versa::Runtime rt{config};
  example::announce(rt, o.devices);
  const nbody::Parameters parameters;
  const auto particles = static_cast<std::size_t>(o.particles);
  const auto blocks = static_cast<std::size_t>(o.blocks);
  nbody::System system;
  std::vector<double> seconds;
  std::vector<versa::DeviceStatistics> devices;
  std::vector<versa::TaskStatistics> tasks;  // the last run's steps
  for (int rep = 0; rep < o.repeat; ++rep) {
    system = nbody::make_system(particles, blocks, parameters);
    const auto before = rt.statistics();
    const auto tasks_before = rt.task_statistics();
    nbody::Simulation simulation(rt, system, o.mode, parameters.dt);
    const auto start = std::chrono::steady_clock::now();
    simulation.submit_steps(o.steps);
    try {
      rt.wait_all();
    } catch (const versa::TaskFailure& failure) {
      std::fprintf(stderr, "nbody: simulation failed: %s\n", failure.what());
      return 1;
    }
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    devices = example::statistics_since(rt, before);
    tasks = example::task_statistics_since(rt, tasks_before);
    // The check compares the forces at the final positions too: one more force evaluation.
    if (o.check && rep == o.repeat - 1) simulation.submit_forces();
    simulation.sync_host();
  }
  const double seconds_of_last_run = seconds.back();
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const double steps_per_s = o.steps / median;
  const nbody::TaskCounts counts = nbody::task_counts(blocks);
  std::printf("particles   %zu in %zu blocks of %zu (last block %zu)\n", particles, blocks,
              system.block_size, system.count(blocks - 1));
  example::print_devices(rt.cpu_workers(), devices);
  std::printf("\n");
  std::printf("mode        %s (force tasks %s their force blocks)\n", nbody::to_string(o.mode),
              o.mode == nbody::ForceAccess::add ? "add into" : "write");
  std::printf("time        %.4f s for %d steps (median of %d)\n", median, o.steps, o.repeat);
  std::printf("performance %.3f steps/s\n", steps_per_s);
  const example::Transfers moved = example::accelerator_transfers(devices);
  const double bytes_per_step = static_cast<double>(moved.to_device + moved.to_host) / o.steps;
  std::printf(
      "transfers   %.1f KiB host->device, %.1f KiB device->host per step, %llu evictions "
      "(last run)\n",
      static_cast<double>(moved.to_device) / o.steps / 1024,
      static_cast<double>(moved.to_host) / o.steps / 1024,
      static_cast<unsigned long long>(moved.evictions));
  std::printf("tasks       self %zu, pair %zu, move %zu per step; last run:\n", counts.self,
              counts.pair, counts.move);
  std::vector<example::Kernel> kernels;
  for (int kernel = 0; kernel < 3; ++kernel)
    kernels.push_back({nbody::kernel_labels[kernel], nbody::kernel_task_types[kernel]});
  example::print_tasks_per_kind(tasks, kernels);
  example::print_kernel_times(tasks, kernels, rt.cpu_workers(), seconds_of_last_run);
  int status = 0;
  if (!nbody::all_finite(system)) {
    std::printf("result      FAIL: non-finite positions, velocities or forces\n");
    status = 1;
  }
  if (o.check) {
    nbody::System reference = nbody::make_system(particles, blocks, parameters);
    nbody::reference_steps(reference, o.steps, parameters.dt);
    nbody::reference_forces(reference);
    const double position_error = nbody::relative_error(system.positions, reference.positions);
    const double velocity_error = nbody::relative_error(system.velocities, reference.velocities);
    const double force_error = nbody::relative_error(system.forces, reference.forces);
    // Written so that a NaN fails.
    const bool pass = position_error <= 1e-12 && velocity_error <= 1e-12 && force_error <= 1e-12;
    std::printf(
        "check       relative error ||x - x_ref|| / ||x_ref||: positions %.3g, velocities %.3g, "
        "forces %.3g: %s\n",
        position_error, velocity_error, force_error, pass ? "PASS" : "FAIL");
    if (!pass) status = 1;
  }
  const std::string used = example::devices_used(devices, '+');
  const std::string system_name = std::string("versa-") + nbody::to_string(o.mode);
  const std::string param = "blocks=" + std::to_string(blocks) + ",devices=" + used;
  example::print_result("nbody", system_name, param, "steps_per_s", steps_per_s, "steps/s");
  example::print_result("nbody", system_name, param, "bytes_per_step", bytes_per_step, "B");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return example::tool_main<Options>(
      argc, argv, "nbody",
      "Simulates particles interacting through the Lennard-Jones potential (all pairs), one task\n"
      "per pair of particle blocks, with the force accesses as reductions (add) or as writes.",
      add_options, run);
}
