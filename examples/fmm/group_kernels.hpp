// The FMM's operators applied to whole groups (group_tree.hpp): what one task of each kernel
// computes, on the group arrays it is given, in host memory. The CPU and emulated-device task
// bodies and the sequential run call these; the CUDA bodies call group_kernels_cuda.hpp.
//
// Group arrays:
//   points      4 n doubles of a particle group's n points: x[n], then y[n], z[n], charge[n]
//   results     4 n doubles: potential[n], then the field's x[n], y[n], z[n]
//   multipoles, locals                 nodes() doubles per cell of a cell group, cell by cell
//   compressed multipoles and locals   rank() doubles per cell
// A task's work list (group_tree.hpp) starts with one header value, the level of the cell
// group the kernel places cells in (0 for P2P), then its entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "group_tree.hpp"
#include "interpolation.hpp"
#include "kernel_steps.hpp"
#include "octree.hpp"

namespace fmm {

// What the kernels of one evaluation share: the operators and the root cube.
struct KernelContext {
  static KernelContext of(const Octree& tree, const ChebyshevInterpolation& operators);

  const ChebyshevInterpolation* interpolation = nullptr;
  double origin[3] = {0, 0, 0};  // the root cube is [origin, origin + width]^3
  double width = 1;

  double cell_width(int level) const;
  // The root cube as the device kernels take it (kernel_steps.hpp).
  steps::RootCube cube() const { return {{origin[0], origin[1], origin[2]}, width}; }
  // The center of the cell of `level` with integer coordinates (x, y, z).
  void center(int level, std::int32_t x, std::int32_t y, std::int32_t z, double out[3]) const;
};

using WorkList = std::span<const std::int32_t>;
using ConstArray = std::span<const double>;
using Array = std::span<double>;

void p2m(const KernelContext& context, WorkList work, ConstArray points, Array multipoles);
void m2m(const KernelContext& context, WorkList work, ConstArray child_multipoles,
         Array parent_multipoles);
void compress(const KernelContext& context, ConstArray multipoles, Array compressed);
void m2l(const KernelContext& context, WorkList work, ConstArray source_compressed,
         Array target_compressed);
void p2l(const KernelContext& context, WorkList work, ConstArray points, Array locals);
void m2p(const KernelContext& context, WorkList work, ConstArray multipoles, ConstArray points,
         Array results);
// P2P runs the kernels of p2p.hpp on each entry.
void p2p_inner(WorkList work, ConstArray points, Array results);
void p2p_pair(WorkList work, ConstArray points_a, ConstArray points_b, Array results_a,
              Array results_b);
// The point pairs the entries of a P2P work list (of `kernel`, p2p_inner or p2p_pair) make
// interact, each pair once: n (n - 1) / 2 for a leaf with itself, the product of the two counts
// otherwise.
double p2p_pairs(WorkList work, Kernel kernel);
void expand(const KernelContext& context, ConstArray compressed, Array locals);
void l2l(const KernelContext& context, WorkList work, ConstArray parent_locals, Array child_locals);
void l2p(const KernelContext& context, WorkList work, ConstArray locals, ConstArray points,
         Array results);

}  // namespace fmm
