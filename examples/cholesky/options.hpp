// The options that the Cholesky tools share: cholesky, cholesky_mpi and their StarPU-MPI peer
// (bench/mpi/starpu_mpi.cpp), so that they take the same names, values and words.
#pragma once

#include "cholesky.hpp"
#include "command_line.hpp"

namespace cholesky {

// Declares -n/--n and --tile, bound to the arguments (their values are the defaults).
inline void add_matrix_options(example::OptionParser& parser, long& n, long& tile) {
  example::add_positive_option(parser, "-n,--n", n, "N", "matrix size");
  example::add_positive_option(parser, "--tile", tile, "B",
                               "tile size (edge tiles are smaller when B does not divide N)");
}

// Declares --check for a tool on the ranks of an MPI job, whose factor is spread over them.
inline void add_gathered_check_option(example::OptionParser& parser, bool& check) {
  parser.flag("--check", check, "gather the factor on rank 0 and check its residual");
}

// Declares --solve, how each panel is solved (PanelSolve), bound to the argument.
inline void add_panel_solve_option(example::OptionParser& parser, PanelSolve& solve) {
  example::add_parsed_option(parser, "--solve", solve, parse_panel_solve,
                             "how each panel is solved against its diagonal tile: trsm\n"
                             "(default), inverse (the tile inverted once by trtri, then one\n"
                             "trmm per tile)")
      .type_name("HOW");
}

}  // namespace cholesky
