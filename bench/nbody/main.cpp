// The n-body simulation of examples/nbody with its force accesses as reductions (versa-add)
// against plain writes (versa-write), in the same process, on 2 CPU workers alone and beside one
// emulated accelerator, with the particles in few and in many blocks.
//
//   versa-bench-nbody [--reps N] [--quick]
//
// Each figure is the median of N repetitions (default 5) of a few steps, after one warm-up step;
// the two modes take turns, on one runtime per device set, so that both see the same machine
// and the same learned placement model. Bytes are those copied between host and devices.
// Afterwards both modes' final states must be finite and agree: add and write compute the
// same sums in different orders.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "common/harness.hpp"
#include "nbody.hpp"

namespace {

constexpr std::size_t particles = 8192;
constexpr int cpu_workers = 2;

struct Measurement {
  std::vector<double> steps_per_s;
  std::vector<double> bytes_per_step;
};

std::uint64_t bytes_moved(const versa::Runtime& rt) {
  std::uint64_t bytes = 0;
  for (const versa::DeviceStatistics& device : rt.statistics())
    bytes += device.bytes_to_device + device.bytes_to_host;
  return bytes;
}

// Runs both modes on one device set; fills `add` and `write` and returns false when a final
// state is not finite or the modes disagree.
bool measure(std::size_t blocks, int emulated, int reps, int steps, Measurement& add,
             Measurement& write) {
  versa::Config config;
  config.cpu_workers = cpu_workers;
  config.gpus = 0;
  config.emulated_devices.resize(static_cast<std::size_t>(emulated));
  config.quiet = true;
  versa::Runtime rt{config};
  const nbody::Parameters parameters;
  nbody::System systems[2] = {nbody::make_system(particles, blocks, parameters),
                              nbody::make_system(particles, blocks, parameters)};
  const nbody::ForceAccess modes[2] = {nbody::ForceAccess::add, nbody::ForceAccess::write};
  Measurement* results[2] = {&add, &write};
  {
    nbody::Simulation simulations[2] = {nbody::Simulation(rt, systems[0], modes[0], parameters.dt),
                                        nbody::Simulation(rt, systems[1], modes[1], parameters.dt)};
    for (nbody::Simulation& simulation : simulations) {
      simulation.submit_steps(1);
      rt.wait_all();
    }
    for (int rep = 0; rep < reps; ++rep)
      for (int m = 0; m < 2; ++m) {
        const std::uint64_t before = bytes_moved(rt);
        const auto start = bench::Clock::now();
        simulations[m].submit_steps(steps);
        rt.wait_all();
        const double seconds = bench::seconds_since(start);
        results[m]->steps_per_s.push_back(steps / seconds);
        results[m]->bytes_per_step.push_back(static_cast<double>(bytes_moved(rt) - before) / steps);
      }
    for (nbody::Simulation& simulation : simulations) simulation.sync_host();
  }
  bool ok = true;
  for (int m = 0; m < 2; ++m)
    if (!nbody::all_finite(systems[m])) {
      std::fprintf(stderr, "nbody %s, %zu blocks, %d emulated: non-finite state\n",
                   nbody::to_string(modes[m]), blocks, emulated);
      ok = false;
    }
  const double errors[3] = {nbody::relative_error(systems[0].positions, systems[1].positions),
                            nbody::relative_error(systems[0].velocities, systems[1].velocities),
                            nbody::relative_error(systems[0].forces, systems[1].forces)};
  for (double error : errors)
    if (!(error <= 1e-9)) {
      std::fprintf(stderr,
                   "nbody %zu blocks, %d emulated: add and write disagree (relative errors: "
                   "positions %g, velocities %g, forces %g)\n",
                   blocks, emulated, errors[0], errors[1], errors[2]);
      ok = false;
      break;
    }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  bool quick = false;
  example::OptionParser parser{
      "versa-bench-nbody",
      "The n-body simulation with its force accesses as reductions (add) against writes, on\n"
      "the CPU alone and beside an emulated accelerator."};
  example::add_positive_option(parser, "--reps", reps, "N",
                               "repetitions per figure (their median)");
  parser.flag("--quick", quick, "one step per repetition and at most 2 repetitions");
  if (const std::optional<int> status = parser.parse(argc, argv)) return *status;
  if (quick) reps = std::min(reps, 2);
  const int steps = quick ? 1 : 3;
  std::printf(
      "# nbody: %zu particles, %d CPU workers; median of %d reps of %d step%s after a warm-up "
      "step; add and write take turns\n",
      particles, cpu_workers, reps, steps, steps == 1 ? "" : "s");
  std::printf("%-7s %-16s %14s %14s %10s %14s %14s\n", "blocks", "devices", "add steps/s",
              "write steps/s", "add/write", "add KiB/step", "write KiB/step");
  int status = 0;
  std::vector<std::function<void()>> results;  // printed after the table
  for (int emulated : {0, 1})
    for (std::size_t blocks : {std::size_t{4}, std::size_t{32}}) {
      const std::string devices = emulated ? "cpu+emulated:1" : "cpu";
      Measurement add, write;
      if (!measure(blocks, emulated, reps, steps, add, write)) status = 1;
      const double add_rate = bench::median(add.steps_per_s);
      const double write_rate = bench::median(write.steps_per_s);
      const double add_bytes = bench::median(add.bytes_per_step);
      const double write_bytes = bench::median(write.bytes_per_step);
      std::printf("%-7zu %-16s %14.3f %14.3f %10.2f %14.1f %14.1f\n", blocks, devices.c_str(),
                  add_rate, write_rate, add_rate / write_rate, add_bytes / 1024,
                  write_bytes / 1024);
      std::fflush(stdout);
      const std::string param = "blocks=" + std::to_string(blocks) + ",devices=" + devices;
      results.push_back([=] {
        bench::print_result("nbody", "versa-add", param, "steps_per_s", add_rate, "steps/s");
        bench::print_result("nbody", "versa-write", param, "steps_per_s", write_rate, "steps/s");
        bench::print_result("nbody", "versa-add", param, "bytes_per_step", add_bytes, "B");
        bench::print_result("nbody", "versa-write", param, "bytes_per_step", write_bytes, "B");
      });
    }
  for (const auto& print : results) print();
  if (status != 0) std::fprintf(stderr, "nbody: FAILED (see above)\n");
  return status;
}
