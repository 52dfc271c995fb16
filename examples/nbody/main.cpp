// Command-line tool: run the Lennard-Jones n-body simulation of nbody.hpp with the force
// accesses as reductions (`add`) or as plain `write`s, and report steps per second, bytes moved
// per step, tasks per device and, with --check, the error against the sequential reference.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody.hpp"

namespace {

const char* const usage = R"(usage: nbody [options]
Simulates particles interacting through the Lennard-Jones potential (all pairs), one task per
pair of particle blocks, with the force accesses as reductions (add) or as writes.
  --particles N    number of particles (default 8192)
  --blocks B       particle blocks (default 4; the last one is smaller when B does not divide N)
  --steps S        time steps (default 10)
  --mode M         force accesses: add (reductions, default) or write
  --devices LIST   devices to use: auto (default: the CPU and every GPU found), cpu,
                   cpu,gpu (all GPUs, which must exist), cpu,emulated:K (K emulated
                   accelerators), or a mix, e.g. cpu,gpu,emulated:1
  --workers W      CPU workers (default: one per core)
  --repeat R       run the simulation R times and report the median time (default 1)
  --check          compare the final positions, velocities and forces with a sequential run
                   and say whether the relative error is at most 1e-12
  --trace FILE     write a Chrome trace of the run (all repetitions) to FILE
  --help           this text
)";

struct Options {
  long particles = 8192;
  long blocks = 4;
  int steps = 10;
  nbody::ForceAccess mode = nbody::ForceAccess::add;
  std::string devices = "auto";
  bool gpu = false;
  bool gpu_required = false;
  int emulated = 0;
  int workers = 0;
  int repeat = 1;
  bool check = false;
  std::string trace;
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "nbody: %s\n(see --help)\n", message.c_str());
  std::exit(2);
}

long parse_long(const std::string& flag, const char* text, long low) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0')
    fail(flag + " expects an integer, not '" + text + "'");
  if (value < low) fail(flag + " must be at least " + std::to_string(low) + ", not " + text);
  return value;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) fail(arg + " expects a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    } else if (arg == "--particles") {
      o.particles = parse_long(arg, value(), 1);
    } else if (arg == "--blocks") {
      o.blocks = parse_long(arg, value(), 1);
    } else if (arg == "--steps") {
      o.steps = static_cast<int>(parse_long(arg, value(), 1));
    } else if (arg == "--mode") {
      try {
        o.mode = nbody::parse_force_access(value());
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
    } else if (arg == "--devices") {
      o.devices = value();
    } else if (arg == "--workers") {
      o.workers = static_cast<int>(parse_long(arg, value(), 1));
    } else if (arg == "--repeat") {
      o.repeat = static_cast<int>(parse_long(arg, value(), 1));
    } else if (arg == "--check") {
      o.check = true;
    } else if (arg == "--trace") {
      o.trace = value();
    } else {
      fail("unknown option '" + arg + "'");
    }
  }
  if (o.blocks > o.particles)
    fail("--blocks " + std::to_string(o.blocks) + " is larger than --particles " +
         std::to_string(o.particles));
  const long block_size = (o.particles + o.blocks - 1) / o.blocks;
  const long filled = (o.particles + block_size - 1) / block_size;
  if (filled != o.blocks)
    fail("--blocks " + std::to_string(o.blocks) + " with --particles " +
         std::to_string(o.particles) + ": blocks of " + std::to_string(block_size) +
         " particles fill only " + std::to_string(filled) + " blocks");
  if (o.devices == "auto") {
    o.gpu = true;
    return o;
  }
  std::size_t start = 0;
  bool cpu = false;
  while (start <= o.devices.size()) {
    const std::size_t comma = std::min(o.devices.find(',', start), o.devices.size());
    const std::string item = o.devices.substr(start, comma - start);
    if (item == "cpu") {
      cpu = true;
    } else if (item == "gpu") {
      o.gpu = o.gpu_required = true;
    } else if (item.rfind("emulated", 0) == 0) {
      const std::string count = item.size() > 9 && item[8] == ':' ? item.substr(9) : "1";
      if (item != "emulated" && item[8] != ':') fail("unknown device '" + item + "' in --devices");
      o.emulated = static_cast<int>(parse_long("--devices emulated:", count.c_str(), 1));
    } else {
      fail("unknown device '" + item + "' in --devices (expected cpu, gpu or emulated:K)");
    }
    start = comma + 1;
  }
  if (!cpu) fail("--devices must include cpu (the CPU workers run the host side)");
  return o;
}

int run(const Options& o) {
  versa::Config config;
  config.cpu_workers = o.workers;
  config.gpus = o.gpu ? -1 : 0;
  config.emulated_devices.resize(static_cast<std::size_t>(o.emulated));
  config.quiet = true;
  config.trace_file = o.trace;
  // One runtime for every repetition: its performance model calibrates on the first.
  versa::Runtime rt{config};
  std::fprintf(stderr, "%s\n", rt.topology_summary().c_str());
  if (o.gpu_required && rt.statistics().size() == 1 + static_cast<std::size_t>(o.emulated))
    fail("--devices lists gpu, but no GPU can be used here");
  const nbody::Parameters parameters;
  const auto particles = static_cast<std::size_t>(o.particles);
  const auto blocks = static_cast<std::size_t>(o.blocks);
  nbody::System system;
  std::vector<double> seconds;
  std::vector<versa::DeviceStatistics> devices;
  nbody::KernelTally tally;
  std::size_t runs[3][3] = {};  // the tally of the last run's steps
  for (int rep = 0; rep < o.repeat; ++rep) {
    system = nbody::make_system(particles, blocks, parameters);
    tally.reset();
    const auto before = rt.statistics();
    nbody::Simulation simulation(rt, system, o.mode, parameters.dt, &tally);
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
    devices = rt.statistics();
    for (std::size_t d = 0; d < devices.size(); ++d) {
      devices[d].bytes_to_device -= before[d].bytes_to_device;
      devices[d].bytes_to_host -= before[d].bytes_to_host;
      devices[d].evictions -= before[d].evictions;
    }
    for (int kernel = 0; kernel < 3; ++kernel)
      for (int device = 0; device < 3; ++device) runs[kernel][device] = tally.runs[kernel][device];
    // The check compares the forces at the final positions too: one more force evaluation.
    if (o.check && rep == o.repeat - 1) simulation.submit_forces();
    simulation.sync_host();
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const double steps_per_s = o.steps / median;
  const nbody::TaskCounts counts = nbody::task_counts(blocks);
  std::printf("particles   %zu in %zu blocks of %zu (last block %zu)\n", particles, blocks,
              system.block_size, system.count(blocks - 1));
  std::printf("devices     cpu: %d workers", rt.cpu_workers());
  for (std::size_t d = 1; d < devices.size(); ++d) std::printf(", %s", devices[d].name.c_str());
  std::printf("\n");
  std::printf("mode        %s (force tasks %s their force blocks)\n", nbody::to_string(o.mode),
              o.mode == nbody::ForceAccess::add ? "add into" : "write");
  std::printf("time        %.4f s for %d steps (median of %d)\n", median, o.steps, o.repeat);
  std::printf("performance %.3f steps/s\n", steps_per_s);
  std::uint64_t to_device = 0, to_host = 0, evictions = 0;
  for (std::size_t d = 1; d < devices.size(); ++d) {
    to_device += devices[d].bytes_to_device;
    to_host += devices[d].bytes_to_host;
    evictions += devices[d].evictions;
  }
  const double bytes_per_step = static_cast<double>(to_device + to_host) / o.steps;
  std::printf(
      "transfers   %.1f KiB host->device, %.1f KiB device->host per step, %llu evictions "
      "(last run)\n",
      static_cast<double>(to_device) / o.steps / 1024,
      static_cast<double>(to_host) / o.steps / 1024, static_cast<unsigned long long>(evictions));
  std::printf("tasks       self %zu, pair %zu, move %zu per step; last run:\n", counts.self,
              counts.pair, counts.move);
  for (int device = 0; device < 3; ++device) {
    if (runs[0][device] + runs[1][device] + runs[2][device] == 0) continue;
    std::printf("            %-9s", nbody::KernelTally::devices[device]);
    for (int kernel = 0; kernel < 3; ++kernel)
      std::printf(" %s %zu", nbody::KernelTally::kernels[kernel], runs[kernel][device]);
    std::printf("\n");
  }
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
  // The devices really used, as the RESULT lines name them: cpu[+gpu][+emulated:K].
  std::string used = "cpu";
  int gpus = 0, emulated = 0;
  for (std::size_t d = 1; d < devices.size(); ++d)
    (devices[d].name.rfind("cuda", 0) == 0 ? gpus : emulated) += 1;
  if (gpus > 0) used += gpus == 1 ? "+gpu" : "+gpu:" + std::to_string(gpus);
  if (emulated > 0) used += "+emulated:" + std::to_string(emulated);
  const std::string system_name = std::string("versa-") + nbody::to_string(o.mode);
  std::printf(
      "RESULT bench=nbody system=%s param=blocks=%zu,devices=%s metric=steps_per_s value=%.6g "
      "unit=steps/s\n",
      system_name.c_str(), blocks, used.c_str(), steps_per_s);
  std::printf(
      "RESULT bench=nbody system=%s param=blocks=%zu,devices=%s metric=bytes_per_step "
      "value=%.6g unit=B\n",
      system_name.c_str(), blocks, used.c_str(), bytes_per_step);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    fail(e.what());
  }
}
