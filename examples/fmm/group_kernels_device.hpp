// The FMM's kernels on a device, written once in CUDA C++ with their launches: compiled by nvcc
// for the GPU (group_kernels_cuda.cu, Device = the GPU worker's stream and cuBLAS handle), and
// by the C++ compiler for the emulated device (group_kernels_emulated.cpp, Device = the CPU, the
// kernels run by cuda_on_cpu and the products by OpenBLAS). So the emulated device, which CI
// runs, runs the very kernels and launch shapes that the GPU runs, each block's threads in turn
// between its barriers. Each kernel spreads the steps of kernel_steps.hpp over a block's threads.
//
// A Device provides:
//   launch(name, kernel, blocks, threads, shared_bytes, arguments...)  kernel<<<...>>>(...)
//   workspace(bytes)                          scratch memory until the task's work has run
//   multiprocessors()                         the SMs a launch's blocks spread over
//   copy(to, from, count, what)               count doubles, device to device
//   gemm(shape, a, b, c, what)                C = op(A) B + beta C (steps::GemmShape, alpha 1)
//   axpy(count, x, y, what)                   y += x
//   grouped_gemm(m, n, k, alpha, a, lda, b, ldb, c, ldc, sizes, what)
//                                             per group g, sizes[g] products C = alpha A B of
//                                             its shape, the operands' addresses in device
//                                             arrays a, b, c (cublasDgemmGroupedBatched's)
// and reports a failure by throwing std::runtime_error that names `what`.
//
// Internal to those two files, which include it once each: everything is in an unnamed
// namespace, since nvcc's host stubs of the kernels and the C++ compiler's kernels would
// otherwise share their names.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda_on_cpu.hpp"
#include "kernel_steps.hpp"
#include "m2l_batches.hpp"

#if defined(__CUDACC__)
#define FMM_UNROLL _Pragma("unroll")
#define FMM_UNROLL_TWICE _Pragma("unroll 2")
#else
#define FMM_UNROLL
#define FMM_UNROLL_TWICE
#endif

namespace fmm::device {

namespace {

constexpr int threads_per_block = 128;

// P2P by target (steps::NearFieldByTarget): `parts` blocks of steps::p2p_block_threads per row
// of the view, each taking its share of the row's source leaves (the blocks go through the rows'
// parts in turn). The block is `splits` sets of `targets` threads: each thread of a set takes
// `per_thread` of the row's targets, so that each source value read from shared memory serves
// that many pairs, and the sets share out each tile of sources, so that a row of few targets
// still gives the SM enough warps to keep its FP64 pipes busy. The sources are staged a block's
// width at a time across the source leaves, so that a tile is full wherever small leaves follow
// each other. At the end of a pass the sets' sums of a target are added in shared memory and
// written by the first set: with one part per row, each point's sums are written by one thread
// (the rows are disjoint), without atomics; with several, the parts' sums go in with one atomic
// add each per target, outside the loop over sources. Three blocks fit an SM (two with three
// targets a thread, whose registers would spill at three).
template <int targets, int splits, int per_thread>
__global__ void __launch_bounds__(targets* splits, per_thread == 2 ? 3 : 2)
    p2p_kernel(const int* work, int parts, const double* points_a, int count_a,
               const double* points_b, int count_b, double* results_a, double* results_b) {
  constexpr int threads = targets * splits;
  __shared__ double sx[threads], sy[threads], sz[threads], sq[threads];
  // The sums of sets 1 to splits - 1, for the first set to add.
  __shared__ double partial[splits > 1 ? splits - 1 : 1][4][per_thread][targets];
  const steps::NearFieldByTarget view = steps::NearFieldByTarget::of(work);
  const int lane = static_cast<int>(threadIdx.x);
  const int target_lane = lane % targets, set = lane / targets;
  for (int b = blockIdx.x; b < view.rows * parts; b += gridDim.x) {
    const int* row = view.row + 5 * (b / parts);
    const int part = b % parts, leaves = row[4] - row[3];
    const int first_source = row[3] + leaves * part / parts;
    const int end_source = row[3] + leaves * (part + 1) / parts;
    const double* target = row[0] ? points_b : points_a;
    const int target_n = row[0] ? count_b : count_a;
    double* result = row[0] ? results_b : results_a;
    for (int base = 0; base < row[2]; base += per_thread * targets) {
      double position[per_thread][3], sum[per_thread][4] = {};
      int k[per_thread];
      bool active[per_thread];
      for (int i = 0; i < per_thread; ++i) {
        const int t = base + i * targets + target_lane;
        active[i] = t < row[2];
        k[i] = row[1] + (active[i] ? t : 0);
        for (int axis = 0; axis < 3; ++axis) position[i][axis] = target[axis * target_n + k[i]];
      }
      // The tile starts at point `offset` of source `s`; this thread stages the one `lane`
      // points further on. Every thread moves the start alike, so the loop is the block's.
      for (int s = first_source, offset = 0; s < end_source;) {
        int mine = s, l = offset + lane;
        while (mine < end_source && l >= view.sources[3 * mine + 2])
          l -= view.sources[3 * mine++ + 2];
        if (mine < end_source) {
          const int* source = view.sources + 3 * mine;
          const double* from = source[0] ? points_b : points_a;
          const int from_n = source[0] ? count_b : count_a;
          const int j = source[1] + l;
          sx[lane] = from[j];
          sy[lane] = from[from_n + j];
          sz[lane] = from[2 * from_n + j];
          sq[lane] = from[3 * from_n + j];
        }
        int tile = 0;
        while (s < end_source && tile < threads) {
          const int left = view.sources[3 * s + 2] - offset, taken = min(left, threads - tile);
          tile += taken;
          offset += taken;
          if (offset == view.sources[3 * s + 2]) ++s, offset = 0;
        }
        __syncthreads();
        // A set's threads read the same source at once: one broadcast from shared memory. The
        // pairs have no branch (steps::p2p_add), so that the compiler interleaves the
        // dependent chains of a thread's targets and of consecutive sources.
        FMM_UNROLL_TWICE
        for (int m = set; m < tile; m += splits) {
          FMM_UNROLL
          for (int i = 0; i < per_thread; ++i)
            steps::p2p_add(position[i], sx[m], sy[m], sz[m], sq[m], sum[i]);
        }
        __syncthreads();
      }
      if (splits > 1) {
        if (set > 0)
          for (int i = 0; i < per_thread; ++i)
            for (int v = 0; v < 4; ++v) partial[set - 1][v][i][target_lane] = sum[i][v];
        __syncthreads();
        if (set == 0)
          for (int other = 0; other < splits - 1; ++other)
            for (int i = 0; i < per_thread; ++i)
              for (int v = 0; v < 4; ++v) sum[i][v] += partial[other][v][i][target_lane];
        __syncthreads();  // before the next pass writes `partial` again
      }
      if (set == 0)
        for (int i = 0; i < per_thread; ++i)
          if (active[i])
            for (int v = 0; v < 4; ++v) {
              double* to = result + v * target_n + k[i];
              if (parts > 1)
                atomicAdd(to, sum[i][v]);
              else
                *to += sum[i][v];
            }
    }
  }
}

// M2L: one thread block per steps::m2l_entries_per_block consecutive entries (offset, target
// cell, source cell), their sources staged in shared memory, then each run of one offset through
// its operator (kernel_steps.hpp): a whole C_d a thread per row, a truncated one a thread per
// column of R and then per row of L. A target cell appears once per offset, in several blocks:
// the sums go in with atomic adds.
__global__ void m2l_kernel(const int* work, int entry_count, const double* operators, int rank,
                           const double* sources, double* targets, double root_width) {
  constexpr int per_block = steps::m2l_entries_per_block;
  const int* entries = work + 1;                           // after the header, the cells' level
  const double scale = 1.0 / ldexp(root_width, -work[0]);  // 1 / the cells' width
  CUDA_DYNAMIC_SHARED(double, staged);  // the sources, r x per_block, then y, r x per_block
  double* y = staged + rank * per_block;
  const int first = static_cast<int>(blockIdx.x) * per_block;
  const int count = min(per_block, entry_count - first);
  const int* entry = entries + 3 * first;
  for (int v = static_cast<int>(threadIdx.x); v < per_block * rank; v += blockDim.x) {
    const int j = v / rank, k = v % rank;
    staged[k * per_block + j] =
        j < count ? sources[static_cast<size_t>(entry[3 * j + 2]) * rank + k] : 0.0;
  }
  __syncthreads();
  for (int run = 0; run < count;) {
    const int offset = entry[3 * run];
    int end = run + 1;
    while (end < count && entry[3 * end] == offset) ++end;
    const steps::M2LOperator op = steps::m2l_operator(operators, offset);
    const double* left = op.values + static_cast<size_t>(rank) * op.rank;
    if (op.rank < rank) {
      for (int q = static_cast<int>(threadIdx.x); q < op.rank; q += blockDim.x)
        steps::m2l_project(op.values, op.rank, rank, staged, q, y);
      __syncthreads();
    }
    for (int i = static_cast<int>(threadIdx.x); i < rank; i += blockDim.x) {
      double sum[per_block] = {};
      if (op.rank < rank)
        steps::m2l_expand_row(left, op.rank, rank, y, i, sum);
      else
        steps::m2l_whole_row(op.values, rank, staged, i, sum);
      FMM_UNROLL
      for (int j = 0; j < per_block; ++j)
        if (j >= run && j < end)
          atomicAdd(&targets[static_cast<size_t>(entry[3 * j + 1]) * rank + i], sum[j] * scale);
    }
    __syncthreads();  // y is rewritten by the next run
    run = end;
  }
}

// M2L as batched products (m2l_batches.hpp): the entries' sources gathered into the columns of
// S, the products' pointer arrays written for cuBLAS from the runs, and the columns of Z added
// into their targets. A target cell appears once per offset, in several runs: atomic adds.
__global__ void m2l_gather_kernel(const int* entries, size_t values, int rank,
                                  const double* sources, double* s) {
  for (size_t v = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; v < values;
       v += static_cast<size_t>(gridDim.x) * blockDim.x)
    s[v] = sources[steps::m2l_source_value(entries, v, rank)];
}

__global__ void m2l_scatter_kernel(const int* entries, size_t values, int rank, const double* z,
                                   double* targets) {
  for (size_t v = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; v < values;
       v += static_cast<size_t>(gridDim.x) * blockDim.x)
    atomicAdd(&targets[steps::m2l_target_value(entries, v, rank)], z[v]);
}

// The runs travel as a kernel argument, in chunks that keep it under the 4 KB every CUDA
// version takes.
constexpr int m2l_runs_per_launch = 128;
struct M2LRunChunk {
  int first_run, count;
  steps::M2LRun run[m2l_runs_per_launch];
};

// Pointer arrays: pass p's A, B and C of run i at pointers[(3 p + 0, 1, 2) * runs + i].
__global__ void m2l_pointers_kernel(M2LRunChunk chunk, int runs, int truncated, int rank,
                                    const double* operators, const double* s, double* y, double* z,
                                    const double** pointers) {
  const int j = static_cast<int>(threadIdx.x);
  if (j >= chunk.count) return;
  const int i = chunk.first_run + j;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 0 && i >= truncated) continue;
    const steps::M2LOperands p = steps::m2l_operands(pass, chunk.run[j], rank, operators, s, y, z);
    pointers[(3 * pass + 0) * runs + i] = p.a;
    pointers[(3 * pass + 1) * runs + i] = p.b;
    pointers[(3 * pass + 2) * runs + i] = p.c;
  }
}

// P2M: one block per entry (cell, x, y, z, first point, count); the block stages a tile's
// bases, then its threads take the multipole's nodes. A cell has one entry per task.
__global__ void p2m_kernel(const int* work, const double* tables_data, int order,
                           steps::RootCube cube, const double* points, size_t point_count,
                           double* multipoles) {
  CUDA_DYNAMIC_SHARED(double, staged);  // 3 p values per tile point
  __shared__ double charges[steps::p2m_tile_points];
  const steps::Tables t = steps::Tables::at(tables_data, order);
  const steps::PositionedEntry entry(cube, work, blockIdx.x);
  const int nodes = order * order * order;
  double* multipole = multipoles + entry.cell() * nodes;
  const int count = entry.count();
  for (int start = 0; start < count; start += steps::p2m_tile_points) {
    const int tile = min(steps::p2m_tile_points, count - start);
    const size_t first = entry.first() + start;
    for (int v = threadIdx.x; v < 3 * tile; v += blockDim.x)
      steps::stage_basis(t, points, point_count, first, v, entry.box.center, entry.box.half_width,
                         staged);
    for (int j = threadIdx.x; j < tile; j += blockDim.x)
      charges[j] = points[3 * point_count + first + j];
    __syncthreads();
    for (int node = threadIdx.x; node < nodes; node += blockDim.x)
      multipole[node] += steps::p2m_node(t, charges, tile, staged, node);
    __syncthreads();
  }
}

// M2M (toward_parent) and L2L: one block per entry, the three phases of the tensor product
// through two scratch vectors in shared memory. Several children share a parent in one M2M
// task, so the products go in with atomic adds.
__global__ void tensor_kernel(const int* work, const double* tables_data, int order,
                              bool toward_parent, const double* from_cells, double* to_cells) {
  CUDA_DYNAMIC_SHARED(double, scratch);  // t1 then t2, p^3 each
  const steps::Tables t = steps::Tables::at(tables_data, order);
  const int* entry = work + 1 + 3 * blockIdx.x;  // m2m: child, parent; l2l: parent, child
  const int nodes = order * order * order;
  const steps::OctantMatrices a(toward_parent ? t.child_to_parent : t.parent_to_child, entry[2]);
  const double* in = from_cells + static_cast<size_t>(entry[0]) * nodes;
  double* out = to_cells + static_cast<size_t>(entry[1]) * nodes;
  double *t1 = scratch, *t2 = scratch + nodes;
  for (int i = threadIdx.x; i < nodes; i += blockDim.x) t1[i] = steps::tensor_z(order, a.z, in, i);
  __syncthreads();
  for (int i = threadIdx.x; i < nodes; i += blockDim.x) t2[i] = steps::tensor_y(order, a.y, t1, i);
  __syncthreads();
  for (int i = threadIdx.x; i < nodes; i += blockDim.x)
    atomicAdd(&out[i], steps::tensor_x(order, a.x, t2, i));
}

// P2L: one block per entry (target cell, x, y, z, first source point, count), the sources
// staged in shared memory a tile at a time, a thread per node of the local. Several source
// leaves of a group may reach one cell: the sums go in with atomic adds.
__global__ void p2l_kernel(const int* work, const double* tables_data, int order,
                           steps::RootCube cube, const double* points, size_t point_count,
                           double* locals) {
  __shared__ double sx[threads_per_block], sy[threads_per_block], sz[threads_per_block],
      sq[threads_per_block];
  const steps::Tables t = steps::Tables::at(tables_data, order);
  const steps::PositionedEntry entry(cube, work, blockIdx.x);
  const steps::CellBox& box = entry.box;
  const int nodes = order * order * order;
  double* local = locals + entry.cell() * nodes;
  for (int start = 0; start < entry.count(); start += threads_per_block) {
    const int tile = min(threads_per_block, entry.count() - start);
    const size_t first = entry.first() + start;
    if (static_cast<int>(threadIdx.x) < tile) {
      sx[threadIdx.x] = points[first + threadIdx.x];
      sy[threadIdx.x] = points[point_count + first + threadIdx.x];
      sz[threadIdx.x] = points[2 * point_count + first + threadIdx.x];
      sq[threadIdx.x] = points[3 * point_count + first + threadIdx.x];
    }
    __syncthreads();
    for (int node = threadIdx.x; node < nodes; node += blockDim.x)
      atomicAdd(&local[node],
                steps::p2l_node(t, node, box.center, box.half_width, sx, sy, sz, sq, tile));
    __syncthreads();
  }
}

// M2P (from_multipole: the source cell's multipole) and L2P (the cell's local): one block per
// entry (cell, x, y, z, first point, count), the expansion staged in shared memory, a thread
// per point. Several source cells may reach one leaf in an M2P task: its sums go in with atomic
// adds; an L2P task has one entry per leaf.
template <bool from_multipole>
__global__ void expansion_to_points_kernel(const int* work, const double* tables_data, int order,
                                           steps::RootCube cube, const double* expansions,
                                           const double* points, size_t point_count,
                                           double* results) {
  CUDA_DYNAMIC_SHARED(double, expansion);
  const steps::Tables t = steps::Tables::at(tables_data, order);
  const steps::PositionedEntry entry(cube, work, blockIdx.x);
  const int nodes = order * order * order;
  for (int i = threadIdx.x; i < nodes; i += blockDim.x)
    expansion[i] = expansions[entry.cell() * nodes + i];
  __syncthreads();
  for (int j = threadIdx.x; j < entry.count(); j += blockDim.x) {
    const size_t k = entry.first() + j;
    double out[4];
    steps::expansion_at_point<from_multipole>(t, expansion, points, point_count, k, entry.box, out);
    for (int r = 0; r < 4; ++r) {
      if (from_multipole)
        atomicAdd(&results[r * point_count + k], out[r]);
      else
        results[r * point_count + k] += out[r];
    }
  }
}

std::size_t entries_of(std::size_t work_size, int stride) {
  return work_size > 0 ? (work_size - 1) / static_cast<std::size_t>(stride) : 0;
}

template <class Device>
void tensor(Device& d, const std::int32_t* work, std::size_t work_size, const double* tables,
            int order, bool toward_parent, const double* from, double* to) {
  const std::size_t entries = entries_of(work_size, 3);
  if (entries == 0) return;
  const std::size_t shared = 2 * static_cast<std::size_t>(order * order * order) * sizeof(double);
  d.launch(toward_parent ? "fmm m2m" : "fmm l2l", tensor_kernel, static_cast<unsigned>(entries),
           threads_per_block, shared, work, tables, order, toward_parent, from, to);
}

template <bool from_multipole, class Device>
void expansion_to_points(Device& d, const std::int32_t* work, std::size_t work_size,
                         const double* tables, int order, const steps::RootCube& cube,
                         const double* expansions, const double* points, std::size_t point_count,
                         double* results) {
  const std::size_t entries = entries_of(work_size, 6);
  if (entries == 0) return;
  const std::size_t shared = static_cast<std::size_t>(order * order * order) * sizeof(double);
  d.launch(from_multipole ? "fmm m2p" : "fmm l2p", expansion_to_points_kernel<from_multipole>,
           static_cast<unsigned>(entries), threads_per_block, shared, work, tables, order, cube,
           expansions, points, point_count, results);
}

// The P2P kernel of blocks of `threads` whose sets of shape.targets threads take the targets.
template <int threads>
auto p2p_kernel_for(steps::P2PShape shape) {
  if (shape.per_thread == 3) return p2p_kernel<128, threads / 128, 3>;
  return shape.targets == 32   ? p2p_kernel<32, threads / 32, 2>
         : shape.targets == 64 ? p2p_kernel<64, threads / 64, 2>
                               : p2p_kernel<128, threads / 128, 2>;
}

template <class Device>
void p2p(Device& d, const steps::NearFieldRows& rows, const std::int32_t* work,
         const double* points_a, std::size_t count_a, const double* points_b, std::size_t count_b,
         double* results_a, double* results_b, bool inner) {
  if (rows.rows == 0) return;
  if (inner) {
    points_b = points_a;
    count_b = count_a;
    results_b = results_a;
  }
  const int parts = steps::p2p_source_parts(rows, steps::p2p_blocks_per_sm * d.multiprocessors());
  const auto blocks = static_cast<unsigned>(rows.rows * parts);
  constexpr int threads = steps::p2p_block_threads;
  d.launch("fmm p2p", p2p_kernel_for<threads>(steps::p2p_shape(rows)), blocks,
           static_cast<unsigned>(threads), 0, work, parts, points_a, static_cast<int>(count_a),
           points_b, static_cast<int>(count_b), results_a, results_b);
}

template <class Device>
void m2l(Device& d, const std::int32_t* work, std::size_t work_size, const double* operators,
         std::size_t rank, const double* sources, double* targets, double root_width) {
  const std::size_t entries = entries_of(work_size, 3);
  if (entries == 0) return;
  constexpr std::size_t per_block = steps::m2l_entries_per_block;
  const auto blocks = static_cast<unsigned>((entries + per_block - 1) / per_block);
  const std::size_t shared = 2 * per_block * rank * sizeof(double);
  d.launch("fmm m2l", m2l_kernel, blocks, threads_per_block, shared, work,
           static_cast<int>(entries), operators, static_cast<int>(rank), sources, targets,
           root_width);
}

template <class Device>
void m2l_products(Device& d, const std::int32_t* work, const M2LBatches& plan,
                  const double* operators, std::size_t rank, const double* sources, double* targets,
                  double root_width) {
  if (plan.entries == 0) return;
  const int r = static_cast<int>(rank);
  const int runs = static_cast<int>(plan.runs.size());
  const std::size_t values = plan.entries * rank;
  // One workspace: S and Z (r values per entry), Y, then the 6 pointer arrays.
  const std::size_t doubles = 2 * values + plan.projections;
  auto* scratch = static_cast<double*>(
      d.workspace(doubles * sizeof(double) + 6 * static_cast<std::size_t>(runs) * sizeof(void*)));
  double* s = scratch;
  double* z = s + values;
  double* y = z + values;
  const auto** pointers = reinterpret_cast<const double**>(scratch + doubles);
  const int* entries = work + 1;
  const auto blocks = static_cast<unsigned>(
      std::min<std::size_t>((values + threads_per_block - 1) / threads_per_block, 4096));

  d.launch("fmm m2l gather", m2l_gather_kernel, blocks, threads_per_block, 0, entries, values, r,
           sources, s);
  for (int first = 0; first < runs; first += m2l_runs_per_launch) {
    M2LRunChunk chunk{first, std::min(m2l_runs_per_launch, runs - first), {}};
    std::copy_n(plan.runs.begin() + first, chunk.count, chunk.run);
    d.launch("fmm m2l pointers", m2l_pointers_kernel, 1, m2l_runs_per_launch, 0, chunk, runs,
             plan.truncated, r, operators, s, y, z, pointers);
  }
  // The grouped calls: per group of equal shapes, its shape (from its first run) on the host.
  const double scale = 1.0 / std::ldexp(root_width, -plan.level);
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<int> sizes = plan.group_sizes(pass);
    if (sizes.empty()) continue;
    const std::size_t groups = sizes.size();
    std::vector<int> m(groups), n(groups), k(groups), lda(groups), ldb(groups), ldc(groups);
    const std::vector<double> alpha(groups, pass == 0 ? 1.0 : scale);
    for (std::size_t g = 0, first = 0; g < groups; first += static_cast<std::size_t>(sizes[g++])) {
      const steps::M2LShape p = steps::m2l_shape(pass, plan.runs[first], r);
      m[g] = p.m, n[g] = p.n, k[g] = p.k, lda[g] = p.lda, ldb[g] = p.ldb, ldc[g] = p.ldc;
    }
    const double* const* a = pointers + 3 * pass * runs;
    d.grouped_gemm(m, n, k, alpha, a, lda, a + runs, ldb, const_cast<double* const*>(a + 2 * runs),
                   ldc, sizes,
                   pass == 0 ? "fmm m2l projection (grouped batched dgemm)"
                             : "fmm m2l (grouped batched dgemm)");
  }
  d.launch("fmm m2l scatter", m2l_scatter_kernel, blocks, threads_per_block, 0, entries, values, r,
           z, targets);
}

template <class Device>
void p2m(Device& d, const std::int32_t* work, std::size_t work_size, const double* tables,
         int order, const steps::RootCube& cube, const double* points, std::size_t point_count,
         double* multipoles) {
  const std::size_t entries = entries_of(work_size, 6);
  if (entries == 0) return;
  const std::size_t shared =
      3 * steps::p2m_tile_points * static_cast<std::size_t>(order) * sizeof(double);
  d.launch("fmm p2m", p2m_kernel, static_cast<unsigned>(entries), threads_per_block, shared, work,
           tables, order, cube, points, point_count, multipoles);
}

template <class Device>
void compress(Device& d, const double* tables, int order, std::size_t rank,
              const double* multipoles, double* compressed, std::size_t cells) {
  const int nodes = order * order * order;
  if (cells == 0) return;
  if (rank == static_cast<std::size_t>(nodes)) {  // not compressed: a copy
    d.copy(compressed, multipoles, cells * rank, "fmm compress copy");
    return;
  }
  d.gemm(steps::compress_shape(nodes, static_cast<int>(rank), static_cast<int>(cells)),
         tables + steps::tables_head(order), multipoles, compressed, "fmm compress (dgemm)");
}

template <class Device>
void expand(Device& d, const double* tables, int order, std::size_t rank, const double* compressed,
            double* locals, std::size_t cells) {
  const int nodes = order * order * order;
  if (cells == 0) return;
  if (rank == static_cast<std::size_t>(nodes)) {  // not compressed: an addition
    d.axpy(cells * rank, compressed, locals, "fmm expand (daxpy)");
    return;
  }
  d.gemm(steps::expand_shape(nodes, static_cast<int>(rank), static_cast<int>(cells)),
         tables + steps::tables_head(order), compressed, locals, "fmm expand (dgemm)");
}

template <class Device>
void p2l(Device& d, const std::int32_t* work, std::size_t work_size, const double* tables,
         int order, const steps::RootCube& cube, const double* points, std::size_t point_count,
         double* locals) {
  const std::size_t entries = entries_of(work_size, 6);
  if (entries == 0) return;
  d.launch("fmm p2l", p2l_kernel, static_cast<unsigned>(entries), threads_per_block, 0, work,
           tables, order, cube, points, point_count, locals);
}

}  // namespace

}  // namespace fmm::device
