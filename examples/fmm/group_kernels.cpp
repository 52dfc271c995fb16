#include "group_kernels.hpp"

#include <cmath>
#include <vector>

#include "direct_sum.hpp"
#include "p2p.hpp"

namespace fmm {

KernelContext KernelContext::of(const Octree& tree, const ChebyshevInterpolation& operators) {
  KernelContext context;
  context.interpolation = &operators;
  for (int axis = 0; axis < 3; ++axis) context.origin[axis] = tree.origin(axis);
  context.width = tree.width(0);
  return context;
}

double KernelContext::cell_width(int level) const { return std::ldexp(width, -level); }

void KernelContext::center(int level, std::int32_t x, std::int32_t y, std::int32_t z,
                           double out[3]) const {
  const double w = cell_width(level);
  out[0] = origin[0] + (x + 0.5) * w;
  out[1] = origin[1] + (y + 0.5) * w;
  out[2] = origin[2] + (z + 0.5) * w;
}

namespace {

// A particle group's arrays, split into their four parts.
struct PointArrays {
  const double *x, *y, *z, *charge;
  explicit PointArrays(ConstArray points) {
    const std::size_t n = points.size() / 4;
    x = points.data();
    y = x + n;
    z = y + n;
    charge = z + n;
  }
};

struct ResultArrays {
  double *potential, *gx, *gy, *gz;
  explicit ResultArrays(Array results) {
    const std::size_t n = results.size() / 4;
    potential = results.data();
    gx = potential + n;
    gy = gx + n;
    gz = gy + n;
  }
};

// The entries of a work list of `kernel`: entry(e)[k] is value k of entry e.
class Entries {
 public:
  Entries(WorkList work, Kernel kernel)
      : level_(work.empty() ? 0 : work[0]),
        data_(work.empty() ? nullptr : work.data() + 1),
        count_(entry_count(kernel, work)),
        stride_(static_cast<std::size_t>(stride(kernel))) {}
  int level() const { return level_; }
  std::size_t size() const { return count_; }
  const std::int32_t* operator[](std::size_t e) const { return data_ + e * stride_; }

 private:
  int level_;
  const std::int32_t* data_;
  std::size_t count_, stride_;
};

std::size_t index(std::int32_t value) { return static_cast<std::size_t>(value); }

// The points of a group from `first` on, `count` of them, as a leaf for the P2P kernels.
LeafPoints leaf(const PointArrays& p, std::size_t first, std::size_t count) {
  return {p.x + first, p.y + first, p.z + first, p.charge + first, count};
}
LeafResults leaf(const ResultArrays& r, std::size_t first) {
  return {r.potential + first, r.gx + first, r.gy + first, r.gz + first};
}

// One entry of a P2P work list: both ranges receive the other's potential and field.
void add_mutual(const std::int32_t* entry, const PointArrays& a, const ResultArrays& ra,
                const PointArrays& b, const ResultArrays& rb) {
  const std::size_t ta = index(entry[0]), tb = index(entry[2]);
  const LeafPoints target = leaf(a, ta, index(entry[1]));
  if (&a == &b && ta == tb) {
    p2p_self(target, leaf(ra, ta));
  } else {
    p2p_mutual(target, leaf(ra, ta), leaf(b, tb, index(entry[3])), leaf(rb, tb));
  }
}

}  // namespace

void p2m(const KernelContext& context, WorkList work, ConstArray points, Array multipoles) {
  const ChebyshevInterpolation& chebyshev = *context.interpolation;
  const Entries entries(work, Kernel::p2m);
  const PointArrays p(points);
  const double half_width = context.cell_width(entries.level()) / 2;
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const std::int32_t* entry = entries[e];
    double center[3];
    context.center(entries.level(), entry[1], entry[2], entry[3], center);
    const std::size_t i = index(entry[4]);
    chebyshev.p2m(center, half_width, p.x + i, p.y + i, p.z + i, p.charge + i, index(entry[5]),
                  multipoles.data() + index(entry[0]) * chebyshev.nodes());
  }
}

void m2m(const KernelContext& context, WorkList work, ConstArray child_multipoles,
         Array parent_multipoles) {
  const ChebyshevInterpolation& chebyshev = *context.interpolation;
  const Entries entries(work, Kernel::m2m);
  const std::size_t nodes = chebyshev.nodes();
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const std::int32_t* entry = entries[e];
    chebyshev.m2m(static_cast<unsigned>(entry[2]),
                  child_multipoles.data() + index(entry[0]) * nodes,
                  parent_multipoles.data() + index(entry[1]) * nodes);
  }
}

void compress(const KernelContext& context, ConstArray multipoles, Array compressed) {
  const ChebyshevInterpolation& chebyshev = *context.interpolation;
  chebyshev.compress(multipoles.data(), compressed.data(), multipoles.size() / chebyshev.nodes());
}

void m2l(const KernelContext& context, WorkList work, ConstArray source_compressed,
         Array target_compressed) {
  const ChebyshevInterpolation& chebyshev = *context.interpolation;
  const Entries entries(work, Kernel::m2l);
  const std::size_t rank = chebyshev.rank();
  const double width = context.cell_width(entries.level());
  std::vector<const double*> sources;
  std::vector<double*> targets;
  // The entries are sorted by offset: each run of one offset is one batched product.
  for (std::size_t first = 0; first < entries.size();) {
    const std::int32_t offset = entries[first][0];
    sources.clear();
    targets.clear();
    std::size_t e = first;
    for (; e < entries.size() && entries[e][0] == offset; ++e) {
      targets.push_back(target_compressed.data() + index(entries[e][1]) * rank);
      sources.push_back(source_compressed.data() + index(entries[e][2]) * rank);
    }
    chebyshev.m2l(offset / 49 - 3, offset / 7 % 7 - 3, offset % 7 - 3, width, sources.data(),
                  targets.data(), sources.size());
    first = e;
  }
}

void p2l(const KernelContext& context, WorkList work, ConstArray points, Array locals) {
  const ChebyshevInterpolation& chebyshev = *context.interpolation;
  const Entries entries(work, Kernel::p2l);
  const PointArrays p(points);
  const std::size_t nodes = chebyshev.nodes();
  std::vector<double> nx(nodes), ny(nodes), nz(nodes);
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const std::int32_t* entry = entries[e];
    double center[3];
    context.center(entries.level(), entry[1], entry[2], entry[3], center);
    chebyshev.node_positions(center, context.cell_width(entries.level()) / 2, nx.data(), ny.data(),
                             nz.data());
    const std::size_t i = index(entry[4]);
    add_potential(nx.data(), ny.data(), nz.data(), nodes, p.x + i, p.y + i, p.z + i, p.charge + i,
                  index(entry[5]), locals.data() + index(entry[0]) * nodes);
  }
}

void m2p(const KernelContext& context, WorkList work, ConstArray multipoles, ConstArray points,
         Array results) {
  const ChebyshevInterpolation& chebyshev = *context.interpolation;
  const Entries entries(work, Kernel::m2p);
  const PointArrays p(points);
  const ResultArrays r(results);
  const std::size_t nodes = chebyshev.nodes();
  std::vector<double> nx(nodes), ny(nodes), nz(nodes);
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const std::int32_t* entry = entries[e];
    double center[3];
    context.center(entries.level(), entry[1], entry[2], entry[3], center);
    chebyshev.node_positions(center, context.cell_width(entries.level()) / 2, nx.data(), ny.data(),
                             nz.data());
    const std::size_t i = index(entry[4]);
    add_potential_and_field(p.x + i, p.y + i, p.z + i, index(entry[5]), nx.data(), ny.data(),
                            nz.data(), multipoles.data() + index(entry[0]) * nodes, nodes,
                            r.potential + i, r.gx + i, r.gy + i, r.gz + i);
  }
}

void p2p_inner(WorkList work, ConstArray points, Array results) {
  const Entries entries(work, Kernel::p2p_inner);
  const PointArrays p(points);
  const ResultArrays r(results);
  for (std::size_t e = 0; e < entries.size(); ++e) add_mutual(entries[e], p, r, p, r);
}

void p2p_pair(WorkList work, ConstArray points_a, ConstArray points_b, Array results_a,
              Array results_b) {
  const Entries entries(work, Kernel::p2p_pair);
  const PointArrays a(points_a), b(points_b);
  const ResultArrays ra(results_a), rb(results_b);
  for (std::size_t e = 0; e < entries.size(); ++e) add_mutual(entries[e], a, ra, b, rb);
}

double p2p_pairs(WorkList work, Kernel kernel) {
  const Entries entries(work, kernel);
  double pairs = 0;
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const std::int32_t* entry = entries[e];
    const double na = entry[1], nb = entry[3];
    const bool self = kernel == Kernel::p2p_inner && entry[0] == entry[2];
    pairs += self ? na * (na - 1) / 2 : na * nb;
  }
  return pairs;
}

void expand(const KernelContext& context, ConstArray compressed, Array locals) {
  const ChebyshevInterpolation& chebyshev = *context.interpolation;
  chebyshev.expand(compressed.data(), locals.data(), locals.size() / chebyshev.nodes());
}

void l2l(const KernelContext& context, WorkList work, ConstArray parent_locals,
         Array child_locals) {
  const ChebyshevInterpolation& chebyshev = *context.interpolation;
  const Entries entries(work, Kernel::l2l);
  const std::size_t nodes = chebyshev.nodes();
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const std::int32_t* entry = entries[e];
    chebyshev.l2l(static_cast<unsigned>(entry[2]), parent_locals.data() + index(entry[0]) * nodes,
                  child_locals.data() + index(entry[1]) * nodes);
  }
}

void l2p(const KernelContext& context, WorkList work, ConstArray locals, ConstArray points,
         Array results) {
  const ChebyshevInterpolation& chebyshev = *context.interpolation;
  const Entries entries(work, Kernel::l2p);
  const PointArrays p(points);
  const ResultArrays r(results);
  const double half_width = context.cell_width(entries.level()) / 2;
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const std::int32_t* entry = entries[e];
    double center[3];
    context.center(entries.level(), entry[1], entry[2], entry[3], center);
    const std::size_t i = index(entry[4]);
    chebyshev.l2p(center, half_width, locals.data() + index(entry[0]) * chebyshev.nodes(), p.x + i,
                  p.y + i, p.z + i, index(entry[5]), r.potential + i, r.gx + i, r.gy + i, r.gz + i);
  }
}

}  // namespace fmm
