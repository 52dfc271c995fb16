// The options that the nbody and nbody_mpi tools share (the simulated system's size and the
// force accesses), so that both accept, refuse and describe them in the same words.
#pragma once

#include <string>

#include "command_line.hpp"
#include "nbody.hpp"

namespace nbody {

// Declares --particles, --blocks and --steps, bound to the arguments (their values are the
// defaults), and sets `app`'s callback to the check that relates them once all are read: the
// blocks must all get particles.
inline void add_system_options(CLI::App& app, long& particles, long& blocks, int& steps) {
  example::add_positive_option(app, "--particles", particles, "N", "number of particles");
  example::add_positive_option(
      app, "--blocks", blocks, "B",
      "particle blocks (the last one is smaller when B does not divide N)");
  example::add_positive_option(app, "--steps", steps, "S", "time steps");
  app.callback([&particles, &blocks] {
    if (blocks > particles)
      throw CLI::ValidationError(
          "--blocks",
          std::to_string(blocks) + " is larger than --particles " + std::to_string(particles));
    const long block_size = (particles + blocks - 1) / blocks;
    const long filled = (particles + block_size - 1) / block_size;
    if (filled != blocks)
      throw CLI::ValidationError(
          "--blocks", std::to_string(blocks) + " with --particles " + std::to_string(particles) +
                          ": blocks of " + std::to_string(block_size) + " particles fill only " +
                          std::to_string(filled) + " blocks");
  });
}

// Declares --mode, bound to `mode` (its value is the default).
inline void add_mode_option(CLI::App& app, ForceAccess& mode) {
  example::add_parsed_option(app, "--mode", mode, parse_force_access,
                             "force tasks add into their force blocks (add: reductions, default)\n"
                             "or write them in the sequential order (write)")
      ->type_name("MODE");
}

}  // namespace nbody
