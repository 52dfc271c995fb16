// The options that the nbody and nbody_mpi tools share (the simulated system's size and the
// force accesses), so that both accept, refuse and describe them in the same words.
#pragma once

#include <string>

#include "command_line.hpp"
#include "nbody.hpp"

namespace nbody {

// Declares --particles, --blocks and --steps, bound to the arguments (their values are the
// defaults), and the check that relates them once all are read: the blocks must all get
// particles.
inline void add_system_options(example::OptionParser& parser, long& particles, long& blocks,
                               int& steps) {
  example::add_positive_option(parser, "--particles", particles, "N", "number of particles");
  example::add_positive_option(
      parser, "--blocks", blocks, "B",
      "particle blocks (the last one is smaller when B does not divide N)");
  example::add_positive_option(parser, "--steps", steps, "S", "time steps");
  parser.validate([&particles, &blocks] {
    if (blocks > particles)
      throw example::OptionError(
          "--blocks",
          std::to_string(blocks) + " is larger than --particles " + std::to_string(particles));
    const long block_size = (particles + blocks - 1) / blocks;
    const long filled = (particles + block_size - 1) / block_size;
    if (filled != blocks)
      throw example::OptionError(
          "--blocks", std::to_string(blocks) + " with --particles " + std::to_string(particles) +
                          ": blocks of " + std::to_string(block_size) + " particles fill only " +
                          std::to_string(filled) + " blocks");
  });
}

// Declares --mode, bound to `mode` (its value is the default).
inline void add_mode_option(example::OptionParser& parser, ForceAccess& mode) {
  example::add_parsed_option(parser, "--mode", mode, parse_force_access,
                             "force tasks add into their force blocks (add: reductions, default)\n"
                             "or write them in the sequential order (write)")
      .type_name("MODE");
}

}  // namespace nbody
