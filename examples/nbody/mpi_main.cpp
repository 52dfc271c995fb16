// The n-body of nbody.hpp on the ranks of an MPI job (versa::mpi): the blocks of particles are
// distributed over the ranks, every rank submits the same task flow (nbody::TaskFlow, the one
// `nbody` submits), each task runs on the owner of the first block it writes and the blocks it
// lacks travel as the data versions say. The force tasks `add` into their force blocks (the
// adds of each rank meet at the block's owner before its move) or, with --mode write, `write`
// them (in the sequential summation order). With --check, rank 0 gathers every block and
// compares it with the sequential run (bitwise with `write`); every rank checks its message
// counts against what owner-computes predicts.
//   mpirun -n 4 nbody_mpi --particles 4096 --blocks 16 --steps 10 --check
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "nbody.hpp"
#include "options.hpp"
#include "result_line.hpp"
#include "versa/mpi.hpp"

namespace {

// How the blocks are dealt to the ranks.
enum class Distribution { cyclic, contiguous };

Distribution parse_distribution(const std::string& text) {
  if (text == "cyclic") return Distribution::cyclic;
  if (text == "contiguous") return Distribution::contiguous;
  throw std::invalid_argument("unknown distribution '" + text + "' (cyclic, contiguous)");
}

struct Options {
  long particles = 8192;
  long blocks = 8;
  int steps = 10;
  int workers = 1;
  Distribution distribution = Distribution::cyclic;
  nbody::ForceAccess mode = nbody::ForceAccess::add;
  bool check = false;
};

// The rank that owns block b's positions, velocities and forces, and so runs its move task and
// the force tasks of row b (self (b, b) and pairs (b, j), which modify force b first).
// Cyclic (b mod P) is the default: it gives each rank about 1/P of the pairs. With `write`, the
// force block j goes through the rows i < j in order, and rows dealt round the ranks make that a
// pipeline. Contiguous ranges send fewer messages but give rank 0 the longest rows (about 3/4 of
// the pairs on 2 ranks), and with `write` rank r waits for the ranks before it.
std::vector<int> block_owners(Distribution distribution, std::size_t blocks, int ranks) {
  std::vector<int> owners(blocks);
  const auto p = static_cast<std::size_t>(ranks);
  for (std::size_t b = 0; b < blocks; ++b)
    owners[b] = static_cast<int>(distribution == Distribution::cyclic ? b % p : b * p / blocks);
  return owners;
}

// Messages sent and received per rank.
struct Traffic {
  std::vector<std::uint64_t> sent, received;
};

// The messages the flow needs by the rule of docs/distributed.md (a rank that runs a task and
// lacks the latest version of a handle it reads receives it, once per version; a run of adds
// ends with one message to the owner from every other rank that added), worked out by hand for
// this flow: `force_phases` force phases, each but the last followed by the moves (which send
// nothing else: a move runs where its three blocks are); with `fetch`, every block then gathered
// on rank 0.
Traffic predict_traffic(const std::vector<int>& owners, int ranks, nbody::ForceAccess mode,
                        int force_phases, bool fetch) {
  const auto r = static_cast<std::size_t>(ranks);
  Traffic t{std::vector<std::uint64_t>(r), std::vector<std::uint64_t>(r)};
  auto message = [&](int from, int to) {
    ++t.sent[static_cast<std::size_t>(from)];
    ++t.received[static_cast<std::size_t>(to)];
  };
  const std::size_t blocks = owners.size();
  for (int phase = 0; phase < force_phases; ++phase) {
    for (std::size_t j = 0; j < blocks; ++j) {
      if (mode == nbody::ForceAccess::add) {
        // Force j gets adds from the pairs (i, j), i < j, on the owners of rows i, and on its
        // own owner (self, pairs (j, k)); the run ends at the move (or the gather): one message
        // to the owner from each other rank among the rows' owners.
        std::vector<bool> added(r);
        for (std::size_t i = 0; i < j; ++i) {
          const auto at = static_cast<std::size_t>(owners[i]);
          if (owners[i] == owners[j] || added[at]) continue;
          added[at] = true;
          message(owners[i], owners[j]);
        }
      } else {
        // Force j, held by its owner (since the last move, or from the start), is written by
        // the pairs (i, j), i < j, on the owners of rows i in order, then on its own owner
        // (self, pairs (j, k), move): one message each time the rank changes.
        int at = owners[j];
        for (std::size_t i = 0; i <= j; ++i) {
          if (owners[i] == at) continue;
          message(at, owners[i]);
          at = owners[i];
        }
      }
      // Position j, written only by its owner's move, is read by the pairs (i, j), i < j: one
      // copy per other rank among their owners (the cache keeps it for their later rows).
      std::vector<bool> has(r);
      has[static_cast<std::size_t>(owners[j])] = true;
      for (std::size_t i = 0; i < j; ++i) {
        if (has[static_cast<std::size_t>(owners[i])]) continue;
        has[static_cast<std::size_t>(owners[i])] = true;
        message(owners[j], owners[i]);
      }
    }
  }
  if (fetch) {
    // After a force phase, rank 0 has position b when it owns b or a row i < b (it read it);
    // velocity b and force b are only on their owner.
    for (std::size_t b = 0; b < blocks; ++b) {
      bool read = false;
      for (std::size_t i = 0; i <= b; ++i) read = read || owners[i] == 0;
      if (!read) message(owners[b], 0);
      if (owners[b] == 0) continue;
      message(owners[b], 0);
      message(owners[b], 0);
    }
  }
  return t;
}

// The blocks of `system` registered on every rank with their owners.
nbody::BlockHandles register_blocks(versa::mpi::Runtime& rt, nbody::System& system,
                                    const std::vector<int>& owners, nbody::ForceAccess mode) {
  nbody::BlockHandles handles;
  for (std::size_t b = 0; b < system.blocks(); ++b) {
    handles.positions.push_back(
        rt.data(system.positions[b], owners[b], nbody::block_name("position", b)));
    handles.velocities.push_back(
        rt.data(system.velocities[b], owners[b], nbody::block_name("velocity", b)));
    handles.forces.push_back(rt.data(system.forces[b], owners[b], nbody::block_name("force", b)));
    if (mode == nbody::ForceAccess::add) handles.forces.back().set_reduction(versa::sum<double>());
  }
  return handles;
}

// Prints this rank's counts and whether they are the predicted ones; returns whether they are.
bool report_rank(const versa::mpi::Runtime& rt, const versa::mpi::Statistics& s,
                 const Traffic& predicted, const char* when) {
  const auto me = static_cast<std::size_t>(rt.rank());
  const bool expected =
      s.messages_sent == predicted.sent[me] && s.messages_received == predicted.received[me];
  std::printf(
      "rank %d %s: %llu of %llu tasks, %llu messages sent (%.1f MiB), %llu received "
      "(predicted %llu and %llu: %s)\n",
      rt.rank(), when, static_cast<unsigned long long>(s.tasks_executed),
      static_cast<unsigned long long>(s.tasks_submitted),
      static_cast<unsigned long long>(s.messages_sent),
      static_cast<double>(s.bytes_sent) / (1 << 20),
      static_cast<unsigned long long>(s.messages_received),
      static_cast<unsigned long long>(predicted.sent[me]),
      static_cast<unsigned long long>(predicted.received[me]), expected ? "equal" : "DIFFERENT");
  std::fflush(stdout);
  return expected;
}

// On rank 0, after the gather: the final positions and velocities, and the forces at the final
// positions, against the sequential run. `write` sums each force block in submission order,
// the reference's order, with the same kernels: the results must be equal, bit for bit. `add`
// sums in another order: relative errors of at most 1e-12, as `nbody --check` allows.
bool check_against_reference(const nbody::System& system, const Options& o,
                             const nbody::Parameters& parameters) {
  nbody::System reference = nbody::make_system(system.particles, system.blocks(), parameters);
  nbody::reference_steps(reference, o.steps, parameters.dt);
  nbody::reference_forces(reference);
  const double position_error = nbody::relative_error(system.positions, reference.positions);
  const double velocity_error = nbody::relative_error(system.velocities, reference.velocities);
  const double force_error = nbody::relative_error(system.forces, reference.forces);
  bool pass;
  if (o.mode == nbody::ForceAccess::write) {
    pass = system.positions == reference.positions && system.velocities == reference.velocities &&
           system.forces == reference.forces;
  } else {
    pass = position_error <= 1e-12 && velocity_error <= 1e-12 && force_error <= 1e-12;
  }
  pass = pass && nbody::all_finite(system);
  std::printf(
      "check       against the sequential run: relative errors positions %.3g, velocities %.3g, "
      "forces %.3g (%s): %s\n",
      position_error, velocity_error, force_error,
      o.mode == nbody::ForceAccess::write ? "bitwise equal" : "at most 1e-12",
      pass ? "PASS" : "FAIL");
  return pass;
}

// Binds the options to `o`.
void add_options(example::OptionParser& parser, Options& o) {
  nbody::add_system_options(parser, o.particles, o.blocks, o.steps);
  example::add_rank_workers_option(parser, o.workers);
  example::add_parsed_option(parser, "--distribution", o.distribution, parse_distribution,
                             "blocks to ranks: cyclic (block b on rank b mod P, default) or "
                             "contiguous (equal ranges)")
      .type_name("D");
  nbody::add_mode_option(parser, o.mode);
  parser.flag("--check", o.check,
              "gather every block on rank 0 and compare with the sequential run (bitwise with "
              "--mode write, relative error at most 1e-12 with add)");
}

int run(const Options& o) {
  const nbody::Parameters parameters;
  // Made before the runtime, so that bad sizes fail before MPI starts; every rank makes the
  // whole system (the blocks it does not own receive the versions it needs).
  nbody::System system = nbody::make_system(static_cast<std::size_t>(o.particles),
                                            static_cast<std::size_t>(o.blocks), parameters);
  versa::Config config;
  config.cpu_workers = o.workers;
  config.pin_workers = false;
  config.quiet = true;
  versa::mpi::Runtime rt(config);
  const std::vector<int> owners = block_owners(o.distribution, system.blocks(), rt.size());
  int status = 0;
  {
    nbody::TaskFlow flow(rt, register_blocks(rt, system, owners, o.mode), o.mode, parameters.dt);
    rt.wait_all();  // every rank has registered before the clock starts
    const auto start = std::chrono::steady_clock::now();
    flow.submit_steps(o.steps);
    rt.wait_all();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Counted before any rank goes on: the progress thread counts a message when it arrives,
    // and a rank that left wait_all first could send the check's messages before this rank
    // has counted the steps'. wait_all is collective: no rank leaves it before all entered it.
    const versa::mpi::Statistics after_steps = rt.statistics();
    rt.wait_all();
    if (!report_rank(rt, after_steps, predict_traffic(owners, rt.size(), o.mode, o.steps, false),
                     "steps"))
      status = 1;
    if (o.check) {
      // The forces at the final positions too, as `nbody --check` compares them.
      flow.submit_forces();
      const nbody::BlockHandles& h = flow.handles();
      for (const auto* blocks : {&h.positions, &h.velocities, &h.forces})
        for (const versa::Handle<double>& block : *blocks) rt.fetch(block, 0);
      rt.wait_all();
      if (!report_rank(rt, rt.statistics(),
                       predict_traffic(owners, rt.size(), o.mode, o.steps + 1, true), "check"))
        status = 1;
    }
    if (rt.rank() == 0) {
      std::printf("particles   %zu in %zu blocks of %zu, %s over %d ranks x %d workers, %s\n",
                  system.particles, system.blocks(), system.block_size,
                  o.distribution == Distribution::cyclic ? "cyclic" : "contiguous", rt.size(),
                  o.workers, nbody::to_string(o.mode));
      std::printf("time        %.4f s for %d steps, %.3f steps/s\n", seconds, o.steps,
                  o.steps / seconds);
      if (o.check && !check_against_reference(system, o, parameters)) status = 1;
      example::print_result("mpi-nbody", std::string("versa-") + nbody::to_string(o.mode),
                            "blocks=" + std::to_string(system.blocks()) + ",ranks=" +
                                std::to_string(rt.size()) + ",workers=" + std::to_string(o.workers),
                            "steps_per_s", o.steps / seconds, "steps/s");
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return example::tool_main<Options>(
      argc, argv, "nbody_mpi",
      "Simulates particles interacting through the Lennard-Jones potential (all pairs), one task\n"
      "per pair of particle blocks, with the blocks distributed over the ranks of an MPI job.",
      add_options, run);
}
