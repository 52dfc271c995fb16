// The options that the fmm and fmm_mpi tools and the FMM's StarPU twin share: the point set, the
// accuracy and the tree's sizes, so that all take the same names, values and words.
#pragma once

#include <cstddef>
#include <optional>

#include "command_line.hpp"
#include "distributions.hpp"
#include "eps_option.hpp"

namespace fmm {

// Declares --n, --dist and --eps, bound to the arguments (their values are the defaults).
inline void add_point_set_options(example::OptionParser& parser, long& n,
                                  Distribution& distribution, double& eps) {
  example::add_positive_option(parser, "--n", n, "N", "number of points");
  example::add_parsed_option(parser, "--dist", distribution, parse_distribution,
                             "point distribution: uniform (default; the unit cube), blobs (8\n"
                             "Gaussian blobs of widths 1e-3 to 3e-2) or sphere (its surface)")
      .type_name("D");
  parser.option("--eps", eps, "relative L2 error of the potential asked for")
      .type_name("EPS")
      .check(check_eps)
      .show_default();
}

// Declares --leaf and --group, bound to the arguments (their values are the defaults; a leaf
// of 0 stands for the size measured fastest at the order, leaf_size_for_order).
inline void add_tree_options(example::OptionParser& parser, long& leaf, long& group) {
  parser
      .option("--leaf", leaf,
              "most points in a leaf cell (default: the size measured fastest at the\n"
              "order that --eps chooses)")
      .type_name("L")
      .positive();
  example::add_positive_option(parser, "--group", group, "G",
                               "most cells per cell group and leaves per particle group");
}

// The Options::leaf_size of a --leaf value: unset for 0 (by the order).
inline std::optional<std::size_t> leaf_size_option(long leaf) {
  return leaf > 0 ? std::optional<std::size_t>(static_cast<std::size_t>(leaf)) : std::nullopt;
}

}  // namespace fmm
