#include "task_program.hpp"

#include <cblas.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <vector>

#include "group_data.hpp"
#include "group_kernels.hpp"
#include "group_kernels_cuda.hpp"
#include "interaction_lists.hpp"
#include "octree.hpp"

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

namespace {

using versa::Span;

std::span<const std::int32_t> in(Span<const std::int32_t> s) { return {s.data(), s.size()}; }
std::span<const double> in(Span<const double> s) { return {s.data(), s.size()}; }
std::span<double> out(Span<double> s) { return {s.data(), s.size()}; }

using Work = Span<const std::int32_t>;
using In = Span<const double>;
using Out = Span<double>;

// The task types. Their CPU bodies call the kernels through lambdas, not the kernels'
// addresses, so the call is inlined into the task's invoker; the emulated device runs the same
// bodies. P2P and M2L also run on GPUs (group_kernels_cuda.hpp); Versa drops CUDA bodies in a build
// without the CUDA backend. The context is the current evaluation's (TaskProgram::evaluate sets it
// before it submits and waits for the tasks before it changes).
auto p2m_type(const KernelContext* c) {
  return versa::task_type("p2m").cpu(
      [c](Work w, In points, Out m) { p2m(*c, in(w), in(points), out(m)); });
}
auto m2m_type(const KernelContext* c) {
  return versa::task_type("m2m").cpu(
      [c](Work w, In child, Out parent) { m2m(*c, in(w), in(child), out(parent)); });
}
auto compress_type(const KernelContext* c) {
  return versa::task_type("compress").cpu([c](In m, Out compressed) {
    compress(*c, in(m), out(compressed));
  });
}
auto m2l_type(const KernelContext* c) {
  return versa::task_type("m2l").cpu(
      [c](Work w, In source, Out target) { m2l(*c, in(w), in(source), out(target)); });
}
// M2L with its operators as a handle, so that they travel to a GPU once and stay there; the
// CPU body takes them from the interpolation instead. Used when the runtime has GPUs.
auto m2l_with_operators_type(const KernelContext* c) {
  return versa::task_type("m2l")
      .cpu([c](Work w, In, In source, Out target) { m2l(*c, in(w), in(source), out(target)); })
      .cuda([c](versa::CudaContext& gpu, Work w, In operators, In source, Out target) {
        cuda::m2l(gpu, w.data(), w.size(), operators.data(), c->interpolation->rank(),
                  source.data(), target.data(), c->width);
      });
}
auto p2l_type(const KernelContext* c) {
  return versa::task_type("p2l").cpu(
      [c](Work w, In points, Out locals) { p2l(*c, in(w), in(points), out(locals)); });
}
auto m2p_type(const KernelContext* c) {
  return versa::task_type("m2p").cpu([c](Work w, In m, In points, Out results) {
    m2p(*c, in(w), in(m), in(points), out(results));
  });
}
auto p2p_inner_type() {
  return versa::task_type("p2p_inner")
      .cpu([](Work w, In points, Out results) { p2p_inner(in(w), in(points), out(results)); })
      .cuda([](versa::CudaContext& gpu, Work w, In points, Out results) {
        cuda::p2p(gpu, w.data(), w.size(), points.data(), points.size() / 4, points.data(),
                  points.size() / 4, results.data(), results.data(), true);
      });
}
auto p2p_pair_type() {
  return versa::task_type("p2p_pair")
      .cpu([](Work w, In a, In b, Out ra, Out rb) {
        p2p_pair(in(w), in(a), in(b), out(ra), out(rb));
      })
      .cuda([](versa::CudaContext& gpu, Work w, In a, In b, Out ra, Out rb) {
        cuda::p2p(gpu, w.data(), w.size(), a.data(), a.size() / 4, b.data(), b.size() / 4,
                  ra.data(), rb.data(), false);
      });
}
auto expand_type(const KernelContext* c) {
  return versa::task_type("expand").cpu(
      [c](In compressed, Out locals) { expand(*c, in(compressed), out(locals)); });
}
auto l2l_type(const KernelContext* c) {
  return versa::task_type("l2l").cpu(
      [c](Work w, In parent, Out child) { l2l(*c, in(w), in(parent), out(child)); });
}
auto l2p_type(const KernelContext* c) {
  return versa::task_type("l2p").cpu([c](Work w, In locals, In points, Out results) {
    l2p(*c, in(w), in(locals), in(points), out(results));
  });
}

}  // namespace

struct TaskProgram::TaskTypes {
  explicit TaskTypes(const Placements& rules)
      : p2m(p2m_type(&context).placement(rules[int(Kernel::p2m)])),
        m2m(m2m_type(&context).placement(rules[int(Kernel::m2m)])),
        compress(compress_type(&context).placement(rules[int(Kernel::compress)])),
        m2l(m2l_type(&context).placement(rules[int(Kernel::m2l)])),
        m2l_with_operators(m2l_with_operators_type(&context).placement(rules[int(Kernel::m2l)])),
        p2l(p2l_type(&context).placement(rules[int(Kernel::p2l)])),
        m2p(m2p_type(&context).placement(rules[int(Kernel::m2p)])),
        p2p_inner(p2p_inner_type().placement(rules[int(Kernel::p2p_inner)])),
        p2p_pair(p2p_pair_type().placement(rules[int(Kernel::p2p_pair)])),
        expand(expand_type(&context).placement(rules[int(Kernel::expand)])),
        l2l(l2l_type(&context).placement(rules[int(Kernel::l2l)])),
        l2p(l2p_type(&context).placement(rules[int(Kernel::l2p)])) {}

  KernelContext context;  // first: the types point to it
  decltype(p2m_type(nullptr)) p2m;
  decltype(m2m_type(nullptr)) m2m;
  decltype(compress_type(nullptr)) compress;
  decltype(m2l_type(nullptr)) m2l;
  decltype(m2l_with_operators_type(nullptr)) m2l_with_operators;
  decltype(p2l_type(nullptr)) p2l;
  decltype(m2p_type(nullptr)) m2p;
  decltype(p2p_inner_type()) p2p_inner;
  decltype(p2p_pair_type()) p2p_pair;
  decltype(expand_type(nullptr)) expand;
  decltype(l2l_type(nullptr)) l2l;
  decltype(l2p_type(nullptr)) l2p;
};

TaskProgram::TaskProgram(versa::Runtime& runtime, const Solver& solver,
                         const Placements& placements)
    : runtime_(runtime), solver_(solver), types_(std::make_unique<TaskTypes>(placements)) {
  if (runtime_.gpu_count() == 0) return;
  m2l_operators_ = solver_.operators().m2l_operators();
  if (!m2l_operators_.empty())
    m2l_operators_handle_ = runtime_.data(m2l_operators_, "m2l operators");
}

TaskProgram::~TaskProgram() = default;

namespace {

// The handles of one evaluation's group arrays and work lists.
struct Handles {
  std::vector<versa::Handle<double>> points, results;
  std::vector<versa::Handle<double>> multipoles, compressed_multipoles, compressed_locals, locals;
  std::vector<versa::Handle<std::int32_t>> work;  // per task; empty handles for none

  Handles(versa::Runtime& rt, const GroupTree& groups, GroupData& data,
          std::vector<std::vector<std::int32_t>>& work_lists) {
    for (std::size_t g = 0; g < groups.particle_groups().size(); ++g) {
      const std::span<double> p = data.points(g), r = data.results(g);
      points.push_back(rt.data(p.data(), p.size(), "points"));
      results.push_back(rt.data(r.data(), r.size(), "results"));
      results.back().set_reduction(versa::sum<double>());
    }
    auto handle = [&rt](std::span<double> array, const char* name) {
      return rt.data(array.data(), array.size(), name);
    };
    for (std::size_t g = 0; g < groups.cell_groups().size(); ++g) {
      multipoles.push_back(handle(data.multipoles(g), "multipoles"));
      compressed_multipoles.push_back(
          handle(data.compressed_multipoles(g), "compressed multipoles"));
      compressed_locals.push_back(handle(data.compressed_locals(g), "compressed locals"));
      locals.push_back(handle(data.locals(g), "locals"));
    }
    work.resize(work_lists.size());
    for (std::size_t t = 0; t < work_lists.size(); ++t)
      if (!work_lists[t].empty()) work[t] = rt.data(work_lists[t], "work list");
  }
};

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

Potentials TaskProgram::evaluate(const Points& points, PhaseTimes& times) {
  const auto start = std::chrono::steady_clock::now();
  const ChebyshevInterpolation& operators = solver_.operators();
  Solver::Plan plan = solver_.plan(points);
  const Octree& tree = plan.tree;
  const GroupTree& groups = plan.groups;
  GroupData data(tree, groups, operators);
  work_ = {};
  for (const GroupTask& task : groups.tasks())
    work_[static_cast<std::size_t>(task.kernel)] += task.interactions;
  std::vector<std::vector<std::int32_t>> work_lists = plan.groups.take_work_lists();
  types_->context = KernelContext::of(tree, operators);
  const double tree_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const PhaseTimes before = kernel_seconds(runtime_);
  {
    Handles h(runtime_, groups, data, work_lists);
    const TaskTypes& type = *types_;
    for (std::size_t t = 0; t < groups.tasks().size(); ++t) {
      const GroupTask& task = groups.tasks()[t];
      const std::size_t s = task.source, d = task.target;
      const versa::Priority priority = versa::priority(priority_of(task.kernel));
      const versa::Work work = versa::work(task.interactions);
      auto list = [&h, t] { return versa::read(h.work[t]); };
      switch (task.kernel) {
        case Kernel::p2m:
          runtime_.submit(type.p2m, list(), versa::read(h.points[s]),
                          versa::commute(h.multipoles[d]), priority, work);
          break;
        case Kernel::m2m:
          runtime_.submit(type.m2m, list(), versa::read(h.multipoles[s]),
                          versa::commute(h.multipoles[d]), priority, work);
          break;
        case Kernel::compress:
          runtime_.submit(type.compress, versa::read(h.multipoles[s]),
                          versa::write_only(h.compressed_multipoles[s]), priority, work);
          break;
        case Kernel::m2l:
          if (m2l_operators_.empty())
            runtime_.submit(type.m2l, list(), versa::read(h.compressed_multipoles[s]),
                            versa::commute(h.compressed_locals[d]), priority, work);
          else
            runtime_.submit(type.m2l_with_operators, list(), versa::read(m2l_operators_handle_),
                            versa::read(h.compressed_multipoles[s]),
                            versa::commute(h.compressed_locals[d]), priority, work);
          break;
        case Kernel::p2l:
          runtime_.submit(type.p2l, list(), versa::read(h.points[s]), versa::commute(h.locals[d]),
                          priority, work);
          break;
        case Kernel::m2p:
          runtime_.submit(type.m2p, list(), versa::read(h.multipoles[s]), versa::read(h.points[d]),
                          versa::add(h.results[d]), priority, work);
          break;
        case Kernel::p2p_inner:
          runtime_.submit(type.p2p_inner, list(), versa::read(h.points[s]),
                          versa::add(h.results[s]), priority, work);
          break;
        case Kernel::p2p_pair:
          runtime_.submit(type.p2p_pair, list(), versa::read(h.points[s]), versa::read(h.points[d]),
                          versa::add(h.results[s]), versa::add(h.results[d]), priority, work);
          break;
        case Kernel::expand:
          runtime_.submit(type.expand, versa::read(h.compressed_locals[s]),
                          versa::commute(h.locals[s]), priority, work);
          break;
        case Kernel::l2l:
          runtime_.submit(type.l2l, list(), versa::read(h.locals[s]), versa::commute(h.locals[d]),
                          priority, work);
          break;
        case Kernel::l2p:
          runtime_.submit(type.l2p, list(), versa::read(h.locals[s]), versa::read(h.points[d]),
                          versa::add(h.results[d]), priority, work);
          break;
      }
    }
    runtime_.wait_all();
  }
  const PhaseTimes after = kernel_seconds(runtime_);
  times = {};
  times.tree = tree_seconds;
  times.upward = after.upward - before.upward;
  times.m2l = after.m2l - before.m2l;
  times.p2p = after.p2p - before.p2p;
  times.downward = after.downward - before.downward;
  return data.results_in_input_order(tree);
}

}  // namespace fmm
