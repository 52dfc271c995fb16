// The FMM's operators as the steps one GPU thread takes: the kernels (group_kernels_device.hpp),
// which the GPU and the emulated device both run, call these. Each step computes one value of a
// block's phase (one basis row, one expansion value, one point's potential); a kernel spreads a
// phase's values over its block's threads with a barrier between phases. Internal to the
// example.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define FMM_HOST_DEVICE __host__ __device__
#else
#define FMM_HOST_DEVICE
#endif

namespace fmm::steps {

constexpr int max_order = 16;

// The operators the device kernels read, in one array (ChebyshevInterpolation::device_tables):
// T_k(x_m) at [k p + m], the child-to-parent matrices of either side, then the parent-to-child
// ones (p x p each, as ChebyshevInterpolation keeps them), then the expansion V (row-major
// p^3 x rank) when the M2L is compressed.
struct Tables {
  int order;
  const double* chebyshev_at_nodes;
  const double* child_to_parent[2];
  const double* parent_to_child[2];
  const double* expansion;

  FMM_HOST_DEVICE static Tables at(const double* data, int order) {
    const int pp = order * order;
    return {order, data, {data + pp, data + 2 * pp}, {data + 3 * pp, data + 4 * pp}, data + 5 * pp};
  }
};

// The values before the expansion in the tables of order p.
constexpr std::size_t tables_head(int order) { return 5 * static_cast<std::size_t>(order * order); }

// The root cube [origin, origin + width]^3 and the centers of the cells in it.
struct RootCube {
  double origin[3];
  double width;

  FMM_HOST_DEVICE double cell_width(int level) const { return ldexp(width, -level); }
};

// The center and half-width of a cell: that of a positioned work-list entry (cell, x, y, z,
// first point, count) of a list whose cells are at `level`.
struct CellBox {
  double center[3];
  double half_width;

  FMM_HOST_DEVICE CellBox(const RootCube& cube, int level, const std::int32_t* entry) {
    const double w = cube.cell_width(level);
    for (int axis = 0; axis < 3; ++axis)
      center[axis] = cube.origin[axis] + (entry[1 + axis] + 0.5) * w;
    half_width = w / 2;
  }
};

// Entry `index` of a work list of positioned entries (P2M, P2L, M2P, L2P): after the list's
// level, six fields each (cell, x, y, z, first point, count), and the cell's box.
struct PositionedEntry {
  const std::int32_t* fields;
  CellBox box;

  FMM_HOST_DEVICE PositionedEntry(const RootCube& cube, const std::int32_t* work, std::size_t index)
      : fields(work + 1 + 6 * index), box(cube, work[0], fields) {}
  // The cell's index among its expansions.
  FMM_HOST_DEVICE std::size_t cell() const { return static_cast<std::size_t>(fields[0]); }
  // The entry's points: `count()` from `first()`.
  FMM_HOST_DEVICE std::size_t first() const { return static_cast<std::size_t>(fields[4]); }
  FMM_HOST_DEVICE int count() const { return fields[5]; }
};

// S_p(xi, x_m) = 1/p + 2/p sum_{k>=1} T_k(xi) T_k(x_m) for m = 0..p-1 into s, from the values
// T_k(x_m) at [k p + m] (ChebyshevInterpolation's basis, on the CPU too).
FMM_HOST_DEVICE inline void basis(int p, const double* chebyshev_at_nodes, double xi, double* s) {
  const double inverse_p = 1.0 / p;
  for (int m = 0; m < p; ++m) s[m] = inverse_p;
  double previous = 1, current = xi;  // T_{k-1}(xi), T_k(xi)
  for (int k = 1; k < p; ++k) {
    const double* tk = chebyshev_at_nodes + k * p;
    for (int m = 0; m < p; ++m) s[m] += 2 * inverse_p * current * tk[m];
    const double next = 2 * xi * current - previous;
    previous = current;
    current = next;
  }
}

// The same and its derivative d/dxi into ds, by T_k' = k U_{k-1}.
FMM_HOST_DEVICE inline void basis_and_derivative(int p, const double* chebyshev_at_nodes, double xi,
                                                 double* s, double* ds) {
  basis(p, chebyshev_at_nodes, xi, s);
  const double inverse_p = 1.0 / p;
  for (int m = 0; m < p; ++m) ds[m] = 0;
  double previous = 0, current = 1;  // U_{k-2}, U_{k-1}
  for (int k = 1; k < p; ++k) {
    const double* tk = chebyshev_at_nodes + k * p;
    const double derivative = k * current;
    for (int m = 0; m < p; ++m) ds[m] += 2 * inverse_p * derivative * tk[m];
    const double next = 2 * xi * current - previous;
    previous = current;
    current = next;
  }
}

FMM_HOST_DEVICE inline void basis(const Tables& t, double xi, double* s) {
  basis(t.order, t.chebyshev_at_nodes, xi, s);
}
FMM_HOST_DEVICE inline void basis_and_derivative(const Tables& t, double xi, double* s,
                                                 double* ds) {
  basis_and_derivative(t.order, t.chebyshev_at_nodes, xi, s, ds);
}

// P2M, a tile of a cell's points at a time: first the block stages the basis of each point
// along each axis (value v: point v / 3, axis v % 3, p values at staged[v p]), then each node
// of the multipole takes the tile's charges.
constexpr int p2m_tile_points = 32;

// `points`: a particle group's array of n points (x[n], y[n], z[n], charge[n]); `first`: the
// tile's first point in it.
FMM_HOST_DEVICE inline void stage_basis(const Tables& t, const double* points, std::size_t n,
                                        std::size_t first, int v, const double center[3],
                                        double half_width, double* staged) {
  const int axis = v % 3;
  const double coordinate = points[static_cast<std::size_t>(axis) * n + first + v / 3];
  basis(t, (coordinate - center[axis]) / half_width, staged + v * t.order);
}

// What multipole value `node` ((a p + b) p + c) receives from the `count` staged points whose
// charges are charges[0..count).
FMM_HOST_DEVICE inline double p2m_node(const Tables& t, const double* charges, int count,
                                       const double* staged, int node) {
  const int p = t.order;
  const int a = node / (p * p), b = node / p % p, c = node % p;
  double sum = 0;
  for (int j = 0; j < count; ++j) {
    const double* s = staged + 3 * j * p;
    sum += charges[j] * s[a] * s[p + b] * s[2 * p + c];
  }
  return sum;
}

// M2M and L2L, out += (A_x (x) A_y (x) A_z) in, as three phases of p^3 values each, through two
// scratch vectors (ChebyshevInterpolation::apply_tensor's order of sums).
// Phase 1, value i = j12 p + i3: t1[i] = sum_j3 A_z[i3 p + j3] in[j12 p + j3].
FMM_HOST_DEVICE inline double tensor_z(int p, const double* az, const double* in, int i) {
  const int j12 = i / p, i3 = i % p;
  double sum = 0;
  for (int j3 = 0; j3 < p; ++j3) sum += az[i3 * p + j3] * in[j12 * p + j3];
  return sum;
}
// Phase 2, value i = (j1 p + i2) p + i3: t2[i] = sum_j2 A_y[i2 p + j2] t1[(j1 p + j2) p + i3].
FMM_HOST_DEVICE inline double tensor_y(int p, const double* ay, const double* t1, int i) {
  const int j1 = i / (p * p), i2 = i / p % p, i3 = i % p;
  double sum = 0;
  for (int j2 = 0; j2 < p; ++j2) sum += ay[i2 * p + j2] * t1[(j1 * p + j2) * p + i3];
  return sum;
}
// Phase 3, value i = i1 p^2 + i23: what out[i] receives, sum_j1 A_x[i1 p + j1] t2[j1 p^2 + i23].
FMM_HOST_DEVICE inline double tensor_x(int p, const double* ax, const double* t2, int i) {
  const int i1 = i / (p * p), i23 = i % (p * p);
  double sum = 0;
  for (int j1 = 0; j1 < p; ++j1) sum += ax[i1 * p + j1] * t2[j1 * p * p + i23];
  return sum;
}

// The matrices of a child's octant (x << 2 | y << 1 | z) for M2M (toward the parent) or L2L.
struct OctantMatrices {
  const double *x, *y, *z;
  FMM_HOST_DEVICE OctantMatrices(const double* const* side, int octant)
      : x(side[octant >> 2 & 1]), y(side[octant >> 1 & 1]), z(side[octant & 1]) {}
};

// L2P of one point at (x, y, z) from the local expansion of the cell: its potential and field
// into out[0..3] (ChebyshevInterpolation::l2p's sums).
FMM_HOST_DEVICE inline void l2p_point(const Tables& t, const double* local,
                                      const double position[3], const double center[3],
                                      double half_width, double out[4]) {
  const int p = t.order;
  double s[3][max_order], ds[3][max_order];
  const double inverse_h = 1.0 / half_width;
  for (int axis = 0; axis < 3; ++axis)
    basis_and_derivative(t, (position[axis] - center[axis]) * inverse_h, s[axis], ds[axis]);
  double value = 0, vx = 0, vy = 0, vz = 0;
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b) {
      const double* row = local + (a * p + b) * p;
      double row_s = 0, row_ds = 0;
      for (int c = 0; c < p; ++c) {
        row_s += row[c] * s[2][c];
        row_ds += row[c] * ds[2][c];
      }
      value += s[0][a] * s[1][b] * row_s;
      vx += ds[0][a] * s[1][b] * row_s;
      vy += s[0][a] * ds[1][b] * row_s;
      vz += s[0][a] * s[1][b] * row_ds;
    }
  out[0] = value;
  out[1] = vx * inverse_h;
  out[2] = vy * inverse_h;
  out[3] = vz * inverse_h;
}

// The position of node (a p + b) p + c of the cell with this center and half-width, from the
// nodes x_m = T_1(x_m) (ChebyshevInterpolation::node_positions).
FMM_HOST_DEVICE inline void node_position(const Tables& t, int node, const double center[3],
                                          double half_width, double out[3]) {
  const int p = t.order;
  const double* x = t.chebyshev_at_nodes + p;
  const int index[3] = {node / (p * p), node / p % p, node % p};
  for (int axis = 0; axis < 3; ++axis) out[axis] = center[axis] + half_width * x[index[axis]];
}

// 1/r of a separation whose square is r2, 0 at zero distance (as the direct sums mask it).
FMM_HOST_DEVICE inline double inverse_distance(double r2) { return r2 > 0 ? 1 / sqrt(r2) : 0.0; }

// P2L: what local value `node` receives from `count` points (x, y, z, q each `count` values): the
// potential at the node.
FMM_HOST_DEVICE inline double p2l_node(const Tables& t, int node, const double center[3],
                                       double half_width, const double* x, const double* y,
                                       const double* z, const double* q, int count) {
  double position[3];
  node_position(t, node, center, half_width, position);
  double sum = 0;
  for (int j = 0; j < count; ++j) {
    const double dx = position[0] - x[j], dy = position[1] - y[j], dz = position[2] - z[j];
    sum += q[j] * inverse_distance(dx * dx + dy * dy + dz * dz);
  }
  return sum;
}

// M2P: the potential and field at one point from the multipole's nodes as charges, into
// out[0..3].
FMM_HOST_DEVICE inline void m2p_point(const Tables& t, const double* multipole,
                                      const double position[3], const double center[3],
                                      double half_width, double out[4]) {
  const int nodes = t.order * t.order * t.order;
  double sum = 0, sum_x = 0, sum_y = 0, sum_z = 0;
  for (int n = 0; n < nodes; ++n) {
    double node[3];
    node_position(t, n, center, half_width, node);
    const double dx = position[0] - node[0], dy = position[1] - node[1], dz = position[2] - node[2];
    const double inverse_r = inverse_distance(dx * dx + dy * dy + dz * dz);
    const double q_over_r = multipole[n] * inverse_r;
    const double q_over_r3 = q_over_r * inverse_r * inverse_r;
    sum += q_over_r;
    sum_x -= q_over_r3 * dx;
    sum_y -= q_over_r3 * dy;
    sum_z -= q_over_r3 * dz;
  }
  out[0] = sum;
  out[1] = sum_x;
  out[2] = sum_y;
  out[3] = sum_z;
}

// P2P by target (the view after a P2P work list's entries, group_tree.hpp): one thread block
// per row, a thread per two target points, the sources staged in shared memory a tile at a time.
struct NearFieldByTarget {
  int rows;
  const std::int32_t* row;      // 5 values each: side, first point, count, first source, end
  const std::int32_t* sources;  // 3 values each: side, first point, count

  FMM_HOST_DEVICE static NearFieldByTarget of(const std::int32_t* work) {
    const std::int32_t* view = work + 1 + 4 * work[0];
    return {view[0], view + 1, view + 1 + 5 * view[0]};
  }
};

// The size of a P2P work list's by-target view, known on the host that made the list
// (GroupTask::rows), where a launch chooses its blocks and their threads: the rows, and the
// target points of all of them.
struct NearFieldRows {
  std::int32_t rows = 0, points = 0;
};

// The threads of a P2P block: 8 warps, so that a row of few targets still gives its SM enough
// warps to hide the FP64 pipes' latency.
inline constexpr int p2p_block_threads = 256;

// How a P2P block takes a row's targets: `targets` threads (32, 64 or 128; the block's other
// threads share out the sources with them), each taking `per_thread` targets per pass over the
// sources (2, or 3 where rows are larger than 256). Chosen for the mean row of `rows`, to take it
// in one pass with as few idle threads as may be: leaves hold from a few points to the leaf size,
// so that 128 would leave most of those threads idle where they are small (38 points on average
// at 10^7 uniform points and leaf size 256), and rows of 305 points (leaf size 512 there) would
// take two passes of 256, the second a fifth full.
struct P2PShape {
  int targets, per_thread;
};
inline P2PShape p2p_shape(const NearFieldRows& rows) {
  const int mean = rows.rows > 0 ? (rows.points + rows.rows - 1) / rows.rows : 0;
  return mean <= 2 * 32    ? P2PShape{32, 2}
         : mean <= 2 * 64  ? P2PShape{64, 2}
         : mean <= 2 * 128 ? P2PShape{128, 2}
                           : P2PShape{128, 3};
}

// The blocks of a P2P launch should fill each SM this many times over: a task of fewer rows than
// that (every task at 10^6 points with groups of 256 leaves: 256 rows for 132 SMs) left SMs idle
// while the longest rows finished, so its rows' sources are cut into parts of a block each.
inline constexpr int p2p_blocks_per_sm = 4;

// The parts a P2P launch cuts each row's source leaves into so that it has at least `min_blocks`
// blocks: 1 where it has that many rows, else at most 8 (each part adds an atomic add per target
// value, and reads the targets again).
inline int p2p_source_parts(const NearFieldRows& rows, int min_blocks) {
  if (rows.rows <= 0 || rows.rows >= min_blocks) return 1;
  return std::min(8, (min_blocks + rows.rows - 1) / rows.rows);
}

// 1/sqrt(r2) from an estimate y of it with a relative error below 2^-19: with e = 1 - r2 y^2,
// two terms of the series
//   y (1 - e)^(-1/2) = y (1 + e/2 + 3e^2/8 + O(e^3))
// leave a relative error of about (5/16) e^3 < 2^-55, in 2 DMUL and 3 DFMA.
FMM_HOST_DEVICE inline double refine_inverse_distance(double r2, double y) {
  const double e = fma(-r2 * y, y, 1.0);
  return fma(y * e, fma(e, 3.0 / 8, 0.5), y);
}

// The estimate of 1/sqrt(r2) that a device's P2P refines: on the GPU, the special-function
// unit's (MUFU.RSQ64H, which writes the high word alone, so at most 20 bits of mantissa; CUDA's
// rsqrt(double) refines it as below to 1 ulp); on the emulated device, the exact value cut to
// the same high word, so that the refinement runs from an estimate as coarse (a relative error
// below 2^-20) over the whole range of doubles. The GPU's flushes subnormal r2 to zero, whose
// estimate is infinite.
FMM_HOST_DEVICE inline double inverse_distance_estimate(double r2) {
#if defined(__CUDA_ARCH__)
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(r2));
  return y;
#else
  std::uint64_t bits;
  const double exact = 1 / std::sqrt(r2);
  std::memcpy(&bits, &exact, sizeof bits);
  bits &= 0xffffffff00000000u;
  double y;
  std::memcpy(&y, &bits, sizeof y);
  return y;
#endif
}

// 1/sqrt(r2) for the P2P kernel on devices, without a branch: the estimate refined, and 0 where
// r2 is zero (a point and itself) or subnormal (points nearer than 1.5e-154, which a device
// takes as coincident). This is the fast path of CUDA's rsqrt(double), instruction for
// instruction, without its branch to the slow path for special values: that branch, and the
// one around the zero test, closed each pair's chain of dependent FP64 instructions in a basic
// block of its own, so that no two pairs of a thread overlapped in the pipes.
FMM_HOST_DEVICE inline double device_inverse_distance(double r2) {
  const double y = refine_inverse_distance(r2, inverse_distance_estimate(r2));
  // r2 >= 2^-1022 as its high word (r2 is never negative), an integer comparison: the FP64
  // pipe, the kernel's limit, is spared one instruction per pair.
#if defined(__CUDA_ARCH__)
  const int high = __double2hiint(r2);
#else
  std::int64_t bits;
  std::memcpy(&bits, &r2, sizeof bits);
  const auto high = static_cast<std::int32_t>(bits >> 32);
#endif
  return high >= 0x00100000 ? y : 0.0;
}

// What a target at `target` receives from a source at (sx, sy, sz) of charge q on a device:
// potential and field added to sum[0..3]; nothing at zero distance.
FMM_HOST_DEVICE inline void p2p_add(const double target[3], double sx, double sy, double sz,
                                    double q, double sum[4]) {
  const double dx = target[0] - sx, dy = target[1] - sy, dz = target[2] - sz;
  const double inverse_r = device_inverse_distance(dx * dx + dy * dy + dz * dz);
  const double q_over_r = q * inverse_r;
  const double q_over_r3 = q_over_r * inverse_r * inverse_r;
  sum[0] += q_over_r;
  sum[1] -= q_over_r3 * dx;
  sum[2] -= q_over_r3 * dy;
  sum[3] -= q_over_r3 * dz;
}

// M2L on the compressed expansions, 8 consecutive entries of a work list (offset, target cell,
// source cell; sorted by offset) per thread block: their sources staged in shared memory
// (staged[m * 8 + j]: value m of entry j's source), so that each operator value read serves all
// 8. The operators are CompressedM2L::device_operators: a whole C_d takes a thread per row; a
// truncated one L R^T first a thread per column q of R (y = R^T s, into shared memory), then a
// thread per row of L.
constexpr int m2l_entries_per_block = 8;

struct M2LOperator {
  int rank;  // k; the compressed rank r when whole, 0 for a near offset
  const double* values;
};
FMM_HOST_DEVICE inline M2LOperator m2l_operator(const double* operators, int offset) {
  return {static_cast<int>(operators[2 * offset]),
          operators + static_cast<std::size_t>(operators[2 * offset + 1])};
}

// sum[j] += row i of a whole C_d (r x r, column-major) times staged source j.
FMM_HOST_DEVICE inline void m2l_whole_row(const double* c, int r, const double* staged, int i,
                                          double sum[m2l_entries_per_block]) {
  for (int m = 0; m < r; ++m) {
    const double value = c[static_cast<std::size_t>(m) * r + i];
    for (int j = 0; j < m2l_entries_per_block; ++j)
      sum[j] += value * staged[m * m2l_entries_per_block + j];
  }
}

// y[q * 8 + j] = column q of R (r x k, row-major) times staged source j.
FMM_HOST_DEVICE inline void m2l_project(const double* right, int k, int r, const double* staged,
                                        int q, double* y) {
  double sum[m2l_entries_per_block] = {};
  for (int m = 0; m < r; ++m) {
    const double value = right[static_cast<std::size_t>(m) * k + q];
    for (int j = 0; j < m2l_entries_per_block; ++j)
      sum[j] += value * staged[m * m2l_entries_per_block + j];
  }
  for (int j = 0; j < m2l_entries_per_block; ++j) y[q * m2l_entries_per_block + j] = sum[j];
}

// sum[j] += row i of L (r x k, column-major; it follows R in the operator's values) times y_j.
FMM_HOST_DEVICE inline void m2l_expand_row(const double* left, int k, int r, const double* y, int i,
                                           double sum[m2l_entries_per_block]) {
  for (int q = 0; q < k; ++q) {
    const double value = left[static_cast<std::size_t>(q) * r + i];
    for (int j = 0; j < m2l_entries_per_block; ++j)
      sum[j] += value * y[q * m2l_entries_per_block + j];
  }
}

// M2L as batched matrix products (m2l_batches.hpp): a run of `count` consecutive entries of one
// offset from entry `first`, its operator's rank k (r when whole) and values (from value
// `values` of the operators), and where its projections start in the scratch Y (truncated
// operators). With S the run's sources gathered into columns and Z their contributions (r
// values per entry, in entry order), its products are
//   pass 0 (truncated only): Y = R^T S   (k x count; R^T is R's row-major storage, lda k)
//   pass 1:                  Z = L Y     (r x count; L column-major, after R)
//                       or   Z = C_d S   (r x count; a whole C_d, column-major)
// as column-major GEMMs without transposes (cuBLAS on a GPU, OpenBLAS on the emulated device, the
// same arguments), pass 1 scaled by 1 / the cells' width.
struct M2LRun {
  std::int32_t first, count, k, values, y;
};
// A product's shape (the GEMM's m, n, k and leading dimensions), which the host needs to
// launch it, and its operands, which the pointer kernel writes on the device.
struct M2LShape {
  int m, n, k, lda, ldb, ldc;
};
FMM_HOST_DEVICE inline M2LShape m2l_shape(int pass, const M2LRun& run, int r) {
  if (pass == 0) return {run.k, run.count, r, run.k, r, run.k};
  if (run.k < r) return {r, run.count, run.k, r, run.k, r};
  return {r, run.count, r, r, r, r};
}
struct M2LOperands {
  const double* a;
  const double* b;
  double* c;
};
FMM_HOST_DEVICE inline M2LOperands m2l_operands(int pass, const M2LRun& run, int r,
                                                const double* operators, const double* s, double* y,
                                                double* z) {
  const double* op = operators + run.values;
  const double* sources = s + static_cast<std::size_t>(run.first) * r;
  double* projected = y + run.y;
  double* contributions = z + static_cast<std::size_t>(run.first) * r;
  if (pass == 0) return {op, sources, projected};
  if (run.k < r) return {op + static_cast<std::size_t>(r) * run.k, projected, contributions};
  return {op, sources, contributions};
}

// Value v of the gathered sources S (or of the contributions Z), r per entry of the work list's
// `entries` (offset, target cell, source cell): where it comes from among the sources (or goes
// to among the targets).
FMM_HOST_DEVICE inline std::size_t m2l_source_value(const std::int32_t* entries, std::size_t v,
                                                    int r) {
  return static_cast<std::size_t>(entries[3 * (v / r) + 2]) * r + v % r;
}
FMM_HOST_DEVICE inline std::size_t m2l_target_value(const std::int32_t* entries, std::size_t v,
                                                    int r) {
  return static_cast<std::size_t>(entries[3 * (v / r) + 1]) * r + v % r;
}

// M2P (from_multipole) or L2P: the potential and field that point k of a group of n points
// receives from the expansion of the cell `box`, into out[0..3].
template <bool from_multipole>
FMM_HOST_DEVICE inline void expansion_at_point(const Tables& t, const double* expansion,
                                               const double* points, std::size_t n, std::size_t k,
                                               const CellBox& box, double out[4]) {
  const double position[3] = {points[k], points[n + k], points[2 * n + k]};
  if (from_multipole)
    m2p_point(t, expansion, position, box.center, box.half_width, out);
  else
    l2p_point(t, expansion, position, box.center, box.half_width, out);
}

// Compression and expansion as one column-major matrix product over a cell group's `count`
// expansions (cuBLAS on a GPU, OpenBLAS on the emulated device, the same arguments):
//   compress: C (rank x count) = V^T (rank x p^3) M (p^3 x count), V^T being V's row-major
//             storage read column-major (lda = rank)
//   expand:   L (p^3 x count) += V (p^3 x rank) C (rank x count), V = op_T of that storage
struct GemmShape {
  bool transpose_a;
  int m, n, k, lda, ldb, ldc;
  double beta;
};
inline GemmShape compress_shape(int nodes, int rank, int count) {
  return {false, rank, count, nodes, rank, nodes, rank, 0.0};
}
inline GemmShape expand_shape(int nodes, int rank, int count) {
  return {true, nodes, count, rank, rank, rank, nodes, 1.0};
}

}  // namespace fmm::steps
