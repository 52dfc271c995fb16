#include "fmm.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "direct_sum.hpp"
#include "interaction_lists.hpp"
#include "interpolation.hpp"
#include "octree.hpp"

namespace fmm {

namespace {

void check_input(const Points& points) {
  const std::size_t n = points.size();
  if (n == 0) throw std::invalid_argument("fmm: no points");
  if (points.y.size() != n || points.z.size() != n || points.charge.size() != n)
    throw std::invalid_argument("fmm: x, y, z and charge differ in length");
  const std::vector<double>* arrays[4] = {&points.x, &points.y, &points.z, &points.charge};
  const char* names[4] = {"x", "y", "z", "charge"};
  for (int a = 0; a < 4; ++a)
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite((*arrays[a])[i]))
        throw std::invalid_argument(std::string("fmm: ") + names[a] + "[" + std::to_string(i) +
                                    "] is not finite");
}

using Clock = std::chrono::steady_clock;

// The seconds since `start`, which then moves on to now.
double seconds_since(Clock::time_point& start) {
  const Clock::time_point now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  return seconds;
}

// The five passes over one tree. Expansions are p^3 doubles per cell, cell after cell.
class Evaluation {
 public:
  Evaluation(const Octree& tree, const InteractionLists& lists,
             const ChebyshevInterpolation& interpolation)
      : tree_(tree),
        lists_(lists),
        chebyshev_(interpolation),
        nodes_(interpolation.nodes()),
        multipole_(tree.cells().size() * nodes_, 0.0),
        local_(tree.cells().size() * nodes_, 0.0),
        result_(tree.points().size()) {}

  // Sets the passes' times in `times`, timed from `start`, which ends at the last pass's end.
  Potentials run(PhaseTimes& times, Clock::time_point& start) {
    upward();
    times.upward = seconds_since(start);
    interact();
    times.interactions = seconds_since(start);
    downward();
    times.downward = seconds_since(start);
    return std::move(result_);
  }

 private:
  double* multipole(std::size_t c) { return &multipole_[c * nodes_]; }
  double* local(std::size_t c) { return &local_[c * nodes_]; }
  const Cell& cell(std::size_t c) const { return tree_.cells()[c]; }
  double half_width(const Cell& c) const { return tree_.width(c.level) / 2; }
  void center(const Cell& c, double out[3]) const { tree_.center(c, out[0], out[1], out[2]); }

  // P2M at the leaves, then M2M from the deepest level up: cells are stored by level, so in
  // reverse order every child has been summed before its parent is passed on.
  void upward() {
    const Points& p = tree_.points();
    for (std::size_t c = 0; c < tree_.cells().size(); ++c) {
      const Cell& leaf = cell(c);
      if (!leaf.is_leaf()) continue;
      double origin[3];
      center(leaf, origin);
      chebyshev_.p2m(origin, half_width(leaf), &p.x[leaf.begin], &p.y[leaf.begin], &p.z[leaf.begin],
                     &p.charge[leaf.begin], leaf.count(), multipole(c));
    }
    for (std::size_t c = tree_.cells().size(); c-- > 1;) {
      const Cell& child = cell(c);
      chebyshev_.m2m(static_cast<unsigned>(child.key & 7), multipole(c),
                     multipole(static_cast<std::size_t>(child.parent)));
    }
  }

  // M2L (V), P2L (X), M2P (W) and P2P (U).
  void interact() {
    m2l();
    const Points& p = tree_.points();
    std::vector<double> nx(nodes_), ny(nodes_), nz(nodes_);
    for (std::size_t b = 0; b < tree_.cells().size(); ++b) {
      const Cell& target = cell(b);
      if (!lists_.x[b].empty()) {
        double origin[3];
        center(target, origin);
        chebyshev_.node_positions(origin, half_width(target), nx.data(), ny.data(), nz.data());
        for (std::int32_t a : lists_.x[b]) {
          const Cell& source = cell(static_cast<std::size_t>(a));
          add_potential(nx.data(), ny.data(), nz.data(), nodes_, &p.x[source.begin],
                        &p.y[source.begin], &p.z[source.begin], &p.charge[source.begin],
                        source.count(), local(b));
        }
      }
      for (std::int32_t a : lists_.w[b]) {
        const Cell& source = cell(static_cast<std::size_t>(a));
        double origin[3];
        center(source, origin);
        chebyshev_.node_positions(origin, half_width(source), nx.data(), ny.data(), nz.data());
        add_potential_and_field(&p.x[target.begin], &p.y[target.begin], &p.z[target.begin],
                                target.count(), nx.data(), ny.data(), nz.data(),
                                multipole(static_cast<std::size_t>(a)), nodes_,
                                &result_.potential[target.begin], &result_.field_x[target.begin],
                                &result_.field_y[target.begin], &result_.field_z[target.begin]);
      }
      for (std::int32_t a : lists_.u[b]) {
        const Cell& source = cell(static_cast<std::size_t>(a));
        add_direct_interactions(p, target.begin, target.end, source.begin, source.end, result_);
      }
    }
  }

  // M2L (V lists) on compressed expansions, batched by level and offset: the pairs of one batch
  // share an operator.
  void m2l() {
    const std::size_t cells = tree_.cells().size(), rank = chebyshev_.rank();
    std::vector<double> multipole_compressed(cells * rank), local_compressed(cells * rank, 0.0);
    chebyshev_.compress(multipole(0), multipole_compressed.data(), cells);
    struct Batch {
      std::vector<const double*> sources;
      std::vector<double*> targets;
    };
    // (level, offset) -> pairs; offsets are in [-3, 3]^3.
    std::map<std::pair<int, int>, Batch> batches;
    for (std::size_t b = 0; b < cells; ++b) {
      const Cell& target = cell(b);
      for (std::int32_t a : lists_.v[b]) {
        const Cell& source = cell(static_cast<std::size_t>(a));
        const int offset = ((static_cast<int>(source.x) - static_cast<int>(target.x) + 3) * 7 +
                            (static_cast<int>(source.y) - static_cast<int>(target.y) + 3)) *
                               7 +
                           (static_cast<int>(source.z) - static_cast<int>(target.z) + 3);
        Batch& batch = batches[{target.level, offset}];
        batch.sources.push_back(&multipole_compressed[static_cast<std::size_t>(a) * rank]);
        batch.targets.push_back(&local_compressed[b * rank]);
      }
    }
    for (const auto& [key, batch] : batches) {
      const auto [level, offset] = key;
      chebyshev_.m2l(offset / 49 - 3, offset / 7 % 7 - 3, offset % 7 - 3, tree_.width(level),
                     batch.sources.data(), batch.targets.data(), batch.sources.size());
    }
    chebyshev_.expand(local_compressed.data(), local(0), cells);
  }

  // L2L from the root down (parents come before children), then L2P at the leaves.
  void downward() {
    const Points& p = tree_.points();
    for (std::size_t c = 1; c < tree_.cells().size(); ++c) {
      const Cell& child = cell(c);
      chebyshev_.l2l(static_cast<unsigned>(child.key & 7),
                     local(static_cast<std::size_t>(child.parent)), local(c));
    }
    for (std::size_t c = 0; c < tree_.cells().size(); ++c) {
      const Cell& leaf = cell(c);
      if (!leaf.is_leaf()) continue;
      double origin[3];
      center(leaf, origin);
      const std::size_t i = leaf.begin;
      chebyshev_.l2p(origin, half_width(leaf), local(c), &p.x[i], &p.y[i], &p.z[i], leaf.count(),
                     &result_.potential[i], &result_.field_x[i], &result_.field_y[i],
                     &result_.field_z[i]);
    }
  }

  const Octree& tree_;
  const InteractionLists& lists_;
  const ChebyshevInterpolation& chebyshev_;
  std::size_t nodes_;
  std::vector<double> multipole_, local_;
  Potentials result_;  // in the tree's (Morton) order
};

}  // namespace

int order_for_accuracy(double eps) {
  if (!(eps >= 1e-10 && eps <= 1e-3))
    throw std::invalid_argument("fmm: eps " + std::to_string(eps) + " is outside [1e-10, 1e-3]");
  // For each decade of eps, the smallest order whose measured relative L2 error of the potential
  // on 3000 uniform points (docs/fmm.md, test FmmMeasure.DISABLED_OrderTable) is at most a
  // third of it, which keeps it below eps on uniform, clustered and sphere points up to
  // N = 10^4 (the error varies by up to 2x with the points and the leaf size). An eps between
  // two decades takes the order of the smaller.
  struct Entry {
    double eps;
    int order;
  };
  static constexpr Entry table[] = {{1e-3, 4}, {1e-4, 6},  {1e-5, 7},  {1e-6, 8},
                                    {1e-7, 9}, {1e-8, 11}, {1e-9, 12}, {1e-10, 13}};
  for (const Entry& entry : table)
    if (entry.eps <= eps * (1 + 1e-9)) return entry.order;
  return table[std::size(table) - 1].order;
}

Solver::Solver(int order, std::size_t leaf_size)
    : leaf_size_(leaf_size != 0 ? leaf_size : throw std::invalid_argument("fmm: leaf_size is 0")),
      interpolation_(std::make_shared<const ChebyshevInterpolation>(order)) {}

Solver::Solver(const Options& options)
    : Solver(order_for_accuracy(options.eps), options.leaf_size) {}

Solver Solver::with_order(int order, std::size_t leaf_size) { return Solver(order, leaf_size); }

int Solver::order() const { return interpolation_->order(); }

Potentials Solver::evaluate(const Points& points) const {
  PhaseTimes times;
  return evaluate(points, times);
}

Potentials Solver::evaluate(const Points& points, PhaseTimes& times) const {
  check_input(points);
  auto start = Clock::now();
  const Octree tree(points, leaf_size_);
  const InteractionLists lists = build_interaction_lists(tree);
  times.tree = seconds_since(start);
  Potentials sorted = Evaluation(tree, lists, *interpolation_).run(times, start);
  Potentials result(points.size());
  const std::vector<std::size_t>& original = tree.original_index();
  for (std::size_t i = 0; i < points.size(); ++i) {
    result.potential[original[i]] = sorted.potential[i];
    result.field_x[original[i]] = sorted.field_x[i];
    result.field_y[original[i]] = sorted.field_y[i];
    result.field_z[original[i]] = sorted.field_z[i];
  }
  times.downward += seconds_since(start);
  return result;
}

Potentials evaluate(const Points& points, const Options& options) {
  return Solver(options).evaluate(points);
}

Potentials evaluate_with_order(const Points& points, int order, std::size_t leaf_size) {
  return Solver::with_order(order, leaf_size).evaluate(points);
}

}  // namespace fmm
