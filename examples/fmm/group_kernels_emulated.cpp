#include "group_kernels_emulated.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace fmm::emulated {

namespace {

std::size_t entries_of(std::size_t work_size, int stride) {
  return work_size > 0 ? (work_size - 1) / static_cast<std::size_t>(stride) : 0;
}

// M2M (toward_parent) and L2L as tensor_kernel runs them, entry by entry (a block each).
void tensor(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
            bool toward_parent, const double* from_cells, double* to_cells) {
  const steps::Tables t = steps::Tables::at(tables, order);
  const int nodes = order * order * order;
  std::vector<double> t1(static_cast<std::size_t>(nodes)), t2(t1.size());
  for (std::size_t e = 0; e < entries_of(work_size, 3); ++e) {
    const std::int32_t* entry = work + 1 + 3 * e;
    const steps::OctantMatrices a(toward_parent ? t.child_to_parent : t.parent_to_child, entry[2]);
    const double* in = from_cells + static_cast<std::size_t>(entry[0]) * nodes;
    double* out = to_cells + static_cast<std::size_t>(entry[1]) * nodes;
    for (int i = 0; i < nodes; ++i) t1[i] = steps::tensor_z(order, a.z, in, i);
    for (int i = 0; i < nodes; ++i) t2[i] = steps::tensor_y(order, a.y, t1.data(), i);
    for (int i = 0; i < nodes; ++i) out[i] += steps::tensor_x(order, a.x, t2.data(), i);
  }
}

// M2P (from_multipole) and L2P as expansion_to_points_kernel runs them, entry by entry.
template <bool from_multipole>
void expansion_to_points(const std::int32_t* work, std::size_t work_size, const double* tables,
                         int order, const steps::RootCube& cube, const double* expansions,
                         const double* points, std::size_t point_count, double* results) {
  const steps::Tables t = steps::Tables::at(tables, order);
  const std::size_t nodes = static_cast<std::size_t>(order * order * order);
  for (std::size_t e = 0; e < entries_of(work_size, 6); ++e) {
    const steps::PositionedEntry entry(cube, work, e);
    const double* expansion = expansions + entry.cell() * nodes;
    for (int j = 0; j < entry.count(); ++j) {
      const std::size_t k = entry.first() + static_cast<std::size_t>(j);
      double out[4];
      steps::expansion_at_point<from_multipole>(t, expansion, points, point_count, k, entry.box,
                                                out);
      for (std::size_t r = 0; r < 4; ++r) results[r * point_count + k] += out[r];
    }
  }
}

void gemm(const steps::GemmShape& g, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasColMajor, g.transpose_a ? CblasTrans : CblasNoTrans, CblasNoTrans, g.m, g.n, g.k,
              1.0, a, g.lda, b, g.ldb, g.beta, c, g.ldc);
}

}  // namespace

void p2p(const std::int32_t* work, std::size_t work_size, const double* points_a,
         std::size_t count_a, const double* points_b, std::size_t count_b, double* results_a,
         double* results_b, bool inner) {
  if (work_size < 2) return;
  if (inner) {
    points_b = points_a;
    count_b = count_a;
    results_b = results_a;
  }
  const steps::NearFieldByTarget view = steps::NearFieldByTarget::of(work);
  for (int r = 0; r < view.rows; ++r) {
    const std::int32_t* row = view.row + 5 * r;
    const double* target = row[0] ? points_b : points_a;
    const std::size_t target_n = row[0] ? count_b : count_a;
    double* result = row[0] ? results_b : results_a;
    for (int t = 0; t < row[2]; ++t) {
      const std::size_t k = static_cast<std::size_t>(row[1] + t);
      const double position[3] = {target[k], target[target_n + k], target[2 * target_n + k]};
      double sum[4] = {0, 0, 0, 0};
      for (int s = row[3]; s < row[4]; ++s) {
        const std::int32_t* source = view.sources + 3 * s;
        const double* from = source[0] ? points_b : points_a;
        const std::size_t from_n = source[0] ? count_b : count_a;
        for (int l = 0; l < source[2]; ++l) {
          const std::size_t j = static_cast<std::size_t>(source[1] + l);
          steps::p2p_add(position, from[j], from[from_n + j], from[2 * from_n + j],
                         from[3 * from_n + j], sum);
        }
      }
      for (std::size_t v = 0; v < 4; ++v) result[v * target_n + k] += sum[v];
    }
  }
}

void m2l(const std::int32_t* work, std::size_t work_size, const double* operators, std::size_t rank,
         const double* sources, double* targets, double root_width) {
  constexpr int per_block = steps::m2l_entries_per_block;
  const std::size_t entries = entries_of(work_size, 3);
  if (entries == 0) return;
  const int r = static_cast<int>(rank);
  const double scale = 1.0 / std::ldexp(root_width, -work[0]);
  std::vector<double> staged(per_block * rank), y(per_block * rank);
  for (std::size_t first = 0; first < entries; first += per_block) {  // a block each
    const int count = static_cast<int>(std::min<std::size_t>(per_block, entries - first));
    const std::int32_t* entry = work + 1 + 3 * first;
    for (int v = 0; v < per_block * r; ++v) {
      const int j = v / r, k = v % r;
      staged[static_cast<std::size_t>(k * per_block + j)] =
          j < count ? sources[static_cast<std::size_t>(entry[3 * j + 2]) * rank +
                              static_cast<std::size_t>(k)]
                    : 0.0;
    }
    for (int run = 0; run < count;) {
      const int offset = entry[3 * run];
      int end = run + 1;
      while (end < count && entry[3 * end] == offset) ++end;
      const steps::M2LOperator op = steps::m2l_operator(operators, offset);
      const double* left = op.values + rank * static_cast<std::size_t>(op.rank);
      if (op.rank < r)
        for (int q = 0; q < op.rank; ++q)
          steps::m2l_project(op.values, op.rank, r, staged.data(), q, y.data());
      for (int i = 0; i < r; ++i) {
        double sum[per_block] = {};
        if (op.rank < r)
          steps::m2l_expand_row(left, op.rank, r, y.data(), i, sum);
        else
          steps::m2l_whole_row(op.values, r, staged.data(), i, sum);
        for (int j = run; j < end; ++j)
          targets[static_cast<std::size_t>(entry[3 * j + 1]) * rank +
                  static_cast<std::size_t>(i)] += sum[j] * scale;
      }
      run = end;
    }
  }
}

void m2l_products(const std::int32_t* work, const M2LBatches& plan, const double* operators,
                  std::size_t rank, const double* sources, double* targets, double root_width) {
  if (plan.entries == 0) return;
  const int r = static_cast<int>(rank);
  const std::int32_t* entries = work + 1;
  const std::size_t values = plan.entries * rank;
  // m2l_gather_kernel: each entry's source, a column of S
  std::vector<double> s(values), y(plan.projections), z(values);
  for (std::size_t v = 0; v < values; ++v) s[v] = sources[steps::m2l_source_value(entries, v, r)];
  // the two grouped calls, product by product
  const double scale = 1.0 / std::ldexp(root_width, -plan.level);
  for (int pass = 0; pass < 2; ++pass) {
    const std::size_t products =
        pass == 0 ? static_cast<std::size_t>(plan.truncated) : plan.runs.size();
    for (std::size_t i = 0; i < products; ++i) {
      const steps::M2LShape g = steps::m2l_shape(pass, plan.runs[i], r);
      const steps::M2LOperands p =
          steps::m2l_operands(pass, plan.runs[i], r, operators, s.data(), y.data(), z.data());
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, g.m, g.n, g.k, pass == 0 ? 1.0 : scale,
                  p.a, g.lda, p.b, g.ldb, 0.0, p.c, g.ldc);
    }
  }
  // m2l_scatter_kernel: each column of Z into its target
  for (std::size_t v = 0; v < values; ++v) targets[steps::m2l_target_value(entries, v, r)] += z[v];
}

void p2m(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* points, std::size_t point_count,
         double* multipoles) {
  const steps::Tables t = steps::Tables::at(tables, order);
  const int nodes = order * order * order;
  std::vector<double> staged(3 * steps::p2m_tile_points * static_cast<std::size_t>(order));
  for (std::size_t e = 0; e < entries_of(work_size, 6); ++e) {
    const steps::PositionedEntry entry(cube, work, e);
    double* multipole = multipoles + entry.cell() * static_cast<std::size_t>(nodes);
    for (int start = 0; start < entry.count(); start += steps::p2m_tile_points) {
      const int tile = std::min(steps::p2m_tile_points, entry.count() - start);
      const std::size_t first = entry.first() + static_cast<std::size_t>(start);
      for (int v = 0; v < 3 * tile; ++v)
        steps::stage_basis(t, points, point_count, first, v, entry.box.center, entry.box.half_width,
                           staged.data());
      const double* charges = points + 3 * point_count + first;
      for (int node = 0; node < nodes; ++node)
        multipole[node] += steps::p2m_node(t, charges, tile, staged.data(), node);
    }
  }
}

void m2m(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const double* child_multipoles, double* parent_multipoles) {
  tensor(work, work_size, tables, order, true, child_multipoles, parent_multipoles);
}

void l2l(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const double* parent_locals, double* child_locals) {
  tensor(work, work_size, tables, order, false, parent_locals, child_locals);
}

void compress(const double* tables, int order, std::size_t rank, const double* multipoles,
              double* compressed, std::size_t cells) {
  const int nodes = order * order * order;
  if (cells == 0) return;
  if (rank == static_cast<std::size_t>(nodes)) {
    std::copy(multipoles, multipoles + cells * rank, compressed);
    return;
  }
  gemm(steps::compress_shape(nodes, static_cast<int>(rank), static_cast<int>(cells)),
       tables + steps::tables_head(order), multipoles, compressed);
}

void expand(const double* tables, int order, std::size_t rank, const double* compressed,
            double* locals, std::size_t cells) {
  const int nodes = order * order * order;
  if (cells == 0) return;
  if (rank == static_cast<std::size_t>(nodes)) {
    cblas_daxpy(static_cast<int>(cells * rank), 1.0, compressed, 1, locals, 1);
    return;
  }
  gemm(steps::expand_shape(nodes, static_cast<int>(rank), static_cast<int>(cells)),
       tables + steps::tables_head(order), compressed, locals);
}

void p2l(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* points, std::size_t point_count,
         double* locals) {
  const steps::Tables t = steps::Tables::at(tables, order);
  const int nodes = order * order * order;
  for (std::size_t e = 0; e < entries_of(work_size, 6); ++e) {
    const steps::PositionedEntry entry(cube, work, e);
    const double* x = points + entry.first();
    double* local = locals + entry.cell() * static_cast<std::size_t>(nodes);
    for (int node = 0; node < nodes; ++node)
      local[node] +=
          steps::p2l_node(t, node, entry.box.center, entry.box.half_width, x, x + point_count,
                          x + 2 * point_count, x + 3 * point_count, entry.count());
  }
}

void m2p(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* multipoles, const double* points,
         std::size_t point_count, double* results) {
  expansion_to_points<true>(work, work_size, tables, order, cube, multipoles, points, point_count,
                            results);
}

void l2p(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* locals, const double* points,
         std::size_t point_count, double* results) {
  expansion_to_points<false>(work, work_size, tables, order, cube, locals, points, point_count,
                             results);
}

}  // namespace fmm::emulated
