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
#include <utility>
#include <vector>

#include "group_data.hpp"
#include "group_kernels.hpp"
#include "group_tree.hpp"
#include "interaction_lists.hpp"
#include "interpolation.hpp"
#include "octree.hpp"

namespace fmm {

void check_points(const Points& points) {
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

namespace {

using Clock = std::chrono::steady_clock;

// The seconds since `start`, which then moves on to now.
double seconds_since(Clock::time_point& start) {
  const Clock::time_point now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  return seconds;
}

}  // namespace

void PhaseTimes::add(Pass pass, double seconds) {
  switch (pass) {
    case Pass::upward:
      upward += seconds;
      return;
    case Pass::far_field:
      m2l += seconds;
      return;
    case Pass::near_field:
      p2p += seconds;
      return;
    case Pass::downward:
      downward += seconds;
      return;
  }
}

int order_for_accuracy(double eps) {
  if (!(eps >= 3e-11 && eps <= 1e-3))
    throw std::invalid_argument("fmm: eps " + std::to_string(eps) + " is outside [3e-11, 1e-3]");
  // For each decade of eps (and 3e-8, where the order between two decades' is worth having: it
  // matches FMM3D's achieved error at its eps 1e-6), the smallest order whose measured relative
  // L2 error of the potential on 3000 uniform points (docs/fmm.md, test
  // FmmMeasure.DISABLED_OrderTable) is at most a third of it, which keeps it below eps on
  // uniform, clustered and sphere points up to N = 10^4 (the error varies by up to 2x with the
  // points and the leaf size). An eps between two entries takes the order of the smaller.
  struct Entry {
    double eps;
    int order;
  };
  static constexpr Entry table[] = {{1e-3, 4},  {1e-4, 6},  {1e-5, 7},  {1e-6, 8},   {1e-7, 9},
                                    {3e-8, 10}, {1e-8, 11}, {1e-9, 12}, {1e-10, 13}, {3e-11, 14}};
  for (const Entry& entry : table)
    if (entry.eps <= eps * (1 + 1e-9)) return entry.order;
  return table[std::size(table) - 1].order;
}

std::size_t leaf_size_for_order(int order) {
  if (order < 2 || order > 16)
    throw std::invalid_argument("fmm: order " + std::to_string(order) + " is outside [2, 16]");
  // Measured with `bench/run fmm-leaf` (docs/fmm.md, "Leaf size per order"): of 128, 256, 512
  // and 1024, the one whose times were closest to the fastest's over uniform and blob points,
  // 10^5 and 10^6 of them, at orders 4, 6, 8, 9, 10, 11 and 12; the orders between and beyond
  // take their neighbours' sizes.
  struct Entry {
    int first_order;
    std::size_t leaf_size;
  };
  static constexpr Entry table[] = {{2, 128}, {5, 256}, {9, 512}, {12, 1024}};
  std::size_t leaf_size = table[0].leaf_size;
  for (const Entry& entry : table)
    if (order >= entry.first_order) leaf_size = entry.leaf_size;
  return leaf_size;
}

namespace {
std::size_t positive(std::size_t value, const char* name) {
  if (value == 0) throw std::invalid_argument(std::string("fmm: ") + name + " is 0");
  return value;
}
}  // namespace

// The members are initialised in order: the sizes are checked before the operators are built.
Solver::Solver(int order, std::size_t leaf_size, std::size_t group_size)
    : leaf_size_(positive(leaf_size, "leaf_size")),
      group_size_(positive(group_size, "group_size")),
      interpolation_(std::make_shared<const ChebyshevInterpolation>(order)) {}

Solver::Solver(std::shared_ptr<const ChebyshevInterpolation> operators, std::size_t leaf_size,
               std::size_t group_size)
    : leaf_size_(positive(leaf_size, "leaf_size")),
      group_size_(positive(group_size, "group_size")),
      interpolation_(std::move(operators)) {}

Solver Solver::with_leaf_size(std::size_t leaf_size) const {
  return Solver(interpolation_, leaf_size, group_size_);
}

Solver::Solver(const Options& options)
    : Solver(order_for_accuracy(options.eps),
             options.leaf_size.value_or(leaf_size_for_order(order_for_accuracy(options.eps))),
             options.group_size) {}

Solver Solver::with_order(int order, std::size_t leaf_size) {
  return Solver(order, leaf_size, default_group_size);
}

int Solver::order() const { return interpolation_->order(); }

Solver::Plan Solver::plan(const Points& points) const {
  check_points(points);
  Octree tree(points, leaf_size_);
  // W cells with fewer points than an expansion's nodes are cheaper as P2P.
  const InteractionLists lists = build_interaction_lists(tree, interpolation_->nodes());
  GroupTree groups(tree, lists, group_size_);
  return {std::move(tree), std::move(groups)};
}

Potentials Solver::evaluate(const Points& points) const {
  PhaseTimes times;
  return evaluate(points, times);
}

Potentials Solver::evaluate(const Points& points, PhaseTimes& times) const {
  auto start = Clock::now();
  const Plan plan = this->plan(points);
  const Octree& tree = plan.tree;
  const GroupTree& groups = plan.groups;
  GroupData data(tree, groups, *interpolation_);
  times = {};
  times.tree = seconds_since(start);
  const KernelContext context = KernelContext::of(tree, *interpolation_);
  for (const GroupTask& task : groups.tasks()) {
    run_task(context, task, data);
    times.add(pass_of(task.kernel), seconds_since(start));
  }
  Potentials result = data.results_in_input_order(tree);
  times.downward += seconds_since(start);
  return result;
}

Potentials Solver::evaluate(const Points& sources, const Points& targets, PhaseTimes& times) const {
  return results_at_targets(evaluate(sources_and_targets(sources, targets), times), targets.size());
}

Points sources_and_targets(const Points& sources, const Points& targets) {
  check_points(sources);
  check_points(targets);
  Points all = sources;
  all.x.insert(all.x.end(), targets.x.begin(), targets.x.end());
  all.y.insert(all.y.end(), targets.y.begin(), targets.y.end());
  all.z.insert(all.z.end(), targets.z.begin(), targets.z.end());
  all.charge.resize(all.x.size(), 0.0);
  return all;
}

Potentials results_at_targets(const Potentials& all, std::size_t targets) {
  Potentials out(targets);
  const std::size_t first = all.size() - targets;
  for (std::size_t i = 0; i < targets; ++i) {
    out.potential[i] = all.potential[first + i];
    out.field_x[i] = all.field_x[first + i];
    out.field_y[i] = all.field_y[first + i];
    out.field_z[i] = all.field_z[first + i];
  }
  return out;
}

Potentials evaluate(const Points& points, const Options& options) {
  check_points(points);  // before the solver's operators are computed: bad points fail at once
  return Solver(options).evaluate(points);
}

Potentials evaluate_with_order(const Points& points, int order, std::size_t leaf_size) {
  return Solver::with_order(order, leaf_size).evaluate(points);
}

}  // namespace fmm
