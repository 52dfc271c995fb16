// The options that size the simulated system, shared by the nbody and nbody_mpi tools so that
// both accept, refuse and describe them in the same words.
#pragma once

#include <string>

#include "command_line.hpp"

namespace nbody {

// Declares --particles, --blocks and --steps, bound to the arguments (their values are the
// defaults), and sets `app`'s callback to the check that relates them once all are read: the
// blocks must all get particles.
inline void add_system_options(CLI::App& app, long& particles, long& blocks, int& steps) {
  app.add_option("--particles", particles, "number of particles")
      ->type_name("N")
      ->transform(example::positive<long>())
      ->capture_default_str();
  app.add_option("--blocks", blocks,
                 "particle blocks (the last one is smaller when B does not divide N)")
      ->type_name("B")
      ->transform(example::positive<long>())
      ->capture_default_str();
  app.add_option("--steps", steps, "time steps")
      ->type_name("S")
      ->transform(example::positive<int>())
      ->capture_default_str();
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

}  // namespace nbody
