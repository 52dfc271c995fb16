#include "group_data.hpp"

#include <algorithm>
#include <new>

#include "parallel_for.hpp"

namespace fmm {

ZeroedDoubles::ZeroedDoubles(std::size_t size)
    : data_(static_cast<double*>(std::calloc(std::max<std::size_t>(size, 1), sizeof(double)))) {
  if (!data_) throw std::bad_alloc();
}

GroupData::GroupData(const Octree& tree, const GroupTree& groups,
                     const ChebyshevInterpolation& operators)
    : groups_(groups),
      nodes_(operators.nodes()),
      rank_(operators.rank()),
      points_(4 * tree.points().size()),
      results_(4 * tree.points().size()),
      multipoles_(tree.cells().size() * nodes_),
      compressed_multipoles_(tree.cells().size() * rank_),
      compressed_locals_(tree.cells().size() * rank_),
      locals_(tree.cells().size() * nodes_) {
  const SortedPoints& sorted = tree.points();
  example::parallel_for(
      groups.particle_groups().size(),
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t g = begin; g < end; ++g) {
          const ParticleGroup& group = groups.particle_groups()[g];
          double* block = points(g).data();
          const std::size_t n = group.point_count;
          for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = group.first_point + i;
            block[i] = sorted.x[k];
            block[n + i] = sorted.y[k];
            block[2 * n + i] = sorted.z[k];
            block[3 * n + i] = sorted.charge[k];
          }
        }
      },
      1);  // a few groups of up to 65536 points each: one or more per thread
}

std::span<double> GroupData::points(std::size_t g) {
  const ParticleGroup& group = groups_.particle_groups()[g];
  return {points_.data() + 4 * group.first_point, 4 * group.point_count};
}

std::span<double> GroupData::results(std::size_t g) {
  const ParticleGroup& group = groups_.particle_groups()[g];
  return {results_.data() + 4 * group.first_point, 4 * group.point_count};
}

std::span<double> GroupData::multipoles(std::size_t g) {
  const CellGroup& group = groups_.cell_groups()[g];
  return {multipoles_.data() + group.first_cell * nodes_, group.cell_count * nodes_};
}

std::span<double> GroupData::compressed_multipoles(std::size_t g) {
  const CellGroup& group = groups_.cell_groups()[g];
  return {compressed_multipoles_.data() + group.first_cell * rank_, group.cell_count * rank_};
}

std::span<double> GroupData::compressed_locals(std::size_t g) {
  const CellGroup& group = groups_.cell_groups()[g];
  return {compressed_locals_.data() + group.first_cell * rank_, group.cell_count * rank_};
}

std::span<double> GroupData::locals(std::size_t g) {
  const CellGroup& group = groups_.cell_groups()[g];
  return {locals_.data() + group.first_cell * nodes_, group.cell_count * nodes_};
}

Potentials GroupData::results_in_input_order(const Octree& tree) const {
  Potentials out;
  results_in_input_order(tree, out);
  return out;
}

void GroupData::results_in_input_order(const Octree& tree, Potentials& out) const {
  const UninitialisedArray<std::size_t>& original = tree.original_index();
  for (std::vector<double>* array : {&out.potential, &out.field_x, &out.field_y, &out.field_z})
    array->resize(original.size());
  // The stores land all over the four arrays (the input order is not the tree's): at 10^7
  // points they are cache misses that the cores take in parallel, a group each. Each point is
  // written once, so the groups' writes are disjoint.
  const std::vector<ParticleGroup>& groups = groups_.particle_groups();
  example::parallel_for(
      groups.size(),
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t g = begin; g < end; ++g) {
          const ParticleGroup& group = groups[g];
          const double* block = results_.data() + 4 * group.first_point;
          const std::size_t n = group.point_count;
          for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = original[group.first_point + i];
            out.potential[k] = block[i];
            out.field_x[k] = block[n + i];
            out.field_y[k] = block[2 * n + i];
            out.field_z[k] = block[3 * n + i];
          }
        }
      },
      1);
}

void run_task(const KernelContext& context, const GroupTask& task, GroupData& data) {
  const WorkList work(task.work);
  const std::size_t s = task.source, t = task.target;
  switch (task.kernel) {
    case Kernel::p2m:
      return p2m(context, work, data.points(s), data.multipoles(t));
    case Kernel::m2m:
      return m2m(context, work, data.multipoles(s), data.multipoles(t));
    case Kernel::compress:
      return compress(context, data.multipoles(s), data.compressed_multipoles(s));
    case Kernel::m2l:
      return m2l(context, work, data.compressed_multipoles(s), data.compressed_locals(t));
    case Kernel::p2l:
      return p2l(context, work, data.points(s), data.locals(t));
    case Kernel::m2p:
      return m2p(context, work, data.multipoles(s), data.points(t), data.results(t));
    case Kernel::p2p_inner:
      return p2p_inner(work, data.points(s), data.results(s));
    case Kernel::p2p_pair:
      return p2p_pair(work, data.points(s), data.points(t), data.results(s), data.results(t));
    case Kernel::expand:
      return expand(context, data.compressed_locals(s), data.locals(s));
    case Kernel::l2l:
      return l2l(context, work, data.locals(s), data.locals(t));
    case Kernel::l2p:
      return l2p(context, work, data.locals(s), data.points(t), data.results(t));
  }
}

}  // namespace fmm
