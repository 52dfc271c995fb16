#include "task_program.hpp"

#include <cblas.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <vector>

#include "interaction_lists.hpp"
#include "octree.hpp"
#include "parallel_for.hpp"
#include "task_flow.hpp"

namespace fmm {

void use_one_blas_thread() { openblas_set_num_threads(1); }

Placements parse_placements(const std::string& text, Placements placements) {
  static const std::map<std::string, versa::Placement> rules = {
      {"auto", versa::Placement::automatic},
      {"cpu", versa::Placement::cpu_only},
      {"gpu", versa::Placement::gpu_only},
      {"prefer-gpu", versa::Placement::prefer_gpu}};
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    begin = end + 1;
    const std::size_t equals = item.find('=');
    if (equals == std::string::npos)
      throw std::invalid_argument("placement '" + item + "' is not KERNEL=RULE");
    const std::string kernel = item.substr(0, equals), rule = item.substr(equals + 1);
    const auto found = rules.find(rule);
    if (found == rules.end())
      throw std::invalid_argument("unknown placement rule '" + rule +
                                  "' (rules: auto, cpu, gpu, prefer-gpu)");
    bool known = false;
    for (int k = 0; k < kernel_count; ++k) {
      const auto which = static_cast<Kernel>(k);
      const bool p2p = which == Kernel::p2p_inner || which == Kernel::p2p_pair;
      if (kernel == to_string(which) || (kernel == "p2p" && p2p) || kernel == "all") {
        placements[static_cast<std::size_t>(k)] = found->second;
        known = true;
      }
    }
    if (!known)
      throw std::invalid_argument(
          "unknown kernel '" + kernel +
          "' (kernels: p2m, m2m, compress, m2l, p2l, m2p, p2p, p2p_inner, p2p_pair, expand, "
          "l2l, l2p, all)");
  }
  return placements;
}

TaskProgram::TaskProgram(versa::Runtime& runtime, const Solver& solver,
                         const Placements& placements)
    : runtime_(runtime), solver_(solver), types_(std::make_unique<flow::TaskTypes>(placements)) {
  if (runtime_.device_count() == 0) return;
  device_tables_ = solver_.operators().device_tables();
  device_tables_handle_ = runtime_.data(device_tables_, "fmm operator tables");
  m2l_operators_ = solver_.operators().m2l_operators();
  if (!m2l_operators_.empty())
    m2l_operators_handle_ = runtime_.data(m2l_operators_, "m2l operators");
}

TaskProgram::~TaskProgram() = default;

namespace {

// The kernel seconds per pass in the runtime's task statistics so far.
PhaseTimes kernel_seconds(const versa::Runtime& rt) {
  PhaseTimes times;
  for (const versa::TaskStatistics& s : rt.task_statistics())
    for (int k = 0; k < kernel_count; ++k)
      if (s.task_type == to_string(static_cast<Kernel>(k)))
        times.add(pass_of(static_cast<Kernel>(k)), s.kernel_seconds);
  return times;
}

}  // namespace

Potentials TaskProgram::evaluate(const Points& points) {
  PhaseTimes times;
  return evaluate(points, times);
}

Potentials TaskProgram::evaluate(const Points& sources, const Points& targets, PhaseTimes& times) {
  return results_at_targets(evaluate(sources_and_targets(sources, targets), times), targets.size());
}

PreparedEvaluation::PreparedEvaluation(const Solver& solver, const Points& points)
    : plan(solver.plan(points)), data(plan.tree, plan.groups, solver.operators()) {
  for (const GroupTask& task : plan.groups.tasks()) {
    work[static_cast<std::size_t>(task.kernel)] += task.interactions;
    if (task.kernel == Kernel::p2p_inner || task.kernel == Kernel::p2p_pair)
      near_field_pairs += fmm::p2p_pairs(task.work, task.kernel);
  }
  work_lists = plan.groups.take_work_lists();
}

std::unique_ptr<PreparedEvaluation> TaskProgram::prepare(const Points& points) const {
  const auto start = std::chrono::steady_clock::now();
  auto prepared = std::make_unique<PreparedEvaluation>(solver_, points);
  if (m2l_products_ && !m2l_operators_.empty()) {
    const std::vector<GroupTask>& tasks = prepared->plan.groups.tasks();
    prepared->m2l_batches.resize(tasks.size());
    example::parallel_for(
        tasks.size(),
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t t = begin; t < end; ++t)
            if (tasks[t].kernel == Kernel::m2l)
              prepared->m2l_batches[t] = M2LBatches::of(
                  prepared->work_lists[t].data(), prepared->work_lists[t].size(),
                  m2l_operators_.data(), static_cast<int>(solver_.operators().rank()));
        },
        64);
  }
  prepared->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return prepared;
}

Potentials TaskProgram::evaluate(const Points& points, PhaseTimes& times) {
  return run(*prepare(points), times);
}

Potentials TaskProgram::run(PreparedEvaluation& prepared, PhaseTimes& times) {
  Potentials result;
  run(prepared, times, result);
  return result;
}

void TaskProgram::run(PreparedEvaluation& prepared, PhaseTimes& times, Potentials& into) {
  const Octree& tree = prepared.plan.tree;
  const GroupTree& groups = prepared.plan.groups;
  work_ = prepared.work;
  types_->context = KernelContext::of(tree, solver_.operators());
  const PhaseTimes before = kernel_seconds(runtime_);
  flow::NearFieldPairs& pairs = types_->pairs;
  pairs.cpu.store(0, std::memory_order_relaxed);
  pairs.emulated.store(0, std::memory_order_relaxed);
  {
    flow::Handles h(groups, prepared.data, prepared.work_lists, {},
                    [this]<class T>(std::span<T> array, int, const char* name) {
                      return runtime_.data(array.data(), array.size(), name);
                    });
    flow::submit_tasks(runtime_, *types_, groups, h,
                       {.tables = device_tables_.empty() ? nullptr : &device_tables_handle_,
                        .m2l = m2l_operators_.empty() ? nullptr : &m2l_operators_handle_,
                        .m2l_batches = &prepared.m2l_batches});
    runtime_.wait_all();
  }
  // Whole numbers below 2^53: the sums are exact, and the GPUs' share is the rest.
  const double cpu = pairs.cpu.load(std::memory_order_relaxed);
  const double emulated = pairs.emulated.load(std::memory_order_relaxed);
  p2p_pairs_.clear();
  const std::pair<const char*, double> kinds[] = {
      {"cpu", cpu}, {"emulated", emulated}, {"cuda", prepared.near_field_pairs - cpu - emulated}};
  for (const auto& [kind, count] : kinds)
    if (count > 0) p2p_pairs_.emplace_back(kind, count);
  const PhaseTimes after = kernel_seconds(runtime_);
  times = {};
  times.tree = prepared.seconds;
  times.upward = after.upward - before.upward;
  times.m2l = after.m2l - before.m2l;
  times.p2p = after.p2p - before.p2p;
  times.downward = after.downward - before.downward;
  prepared.data.results_in_input_order(tree, into);
}

}  // namespace fmm
