#include "fmm/starpu_fmm_tasks.hpp"

#include <starpu_heteroprio.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace bench::starpu_fmm {
namespace {

// Runs `body` on the task's context and adds its duration to the task's kernel.
template <class Body>
void timed(void* cl_arg, Body body) {
  const auto& arg = *static_cast<const TaskArg*>(cl_arg);
  const auto start = std::chrono::steady_clock::now();
  body(*arg.context);
  const auto k = static_cast<std::size_t>(arg.kernel);
  arg.clocks->nanoseconds[k].fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count(),
      std::memory_order_relaxed);
  arg.clocks->tasks[k].fetch_add(1, std::memory_order_relaxed);
}

// ---- Codelet bodies: the kernels of group_kernels.hpp on the task's buffers, in task_buffers'
// order. `extra` is 1 where the buffers hold the operator tables (or M2L's operators), else 0.

template <int extra>
void p2m_body(void* b[], void* arg) {
  timed(arg, [&](const auto& c) { fmm::p2m(c, work(b[0]), in(b[1 + extra]), out(b[2 + extra])); });
}
template <int extra>
void m2m_body(void* b[], void* arg) {
  timed(arg, [&](const auto& c) { fmm::m2m(c, work(b[0]), in(b[1 + extra]), out(b[2 + extra])); });
}
template <int extra>
void compress_body(void* b[], void* arg) {
  timed(arg, [&](const auto& c) { fmm::compress(c, in(b[extra]), out(b[1 + extra])); });
}
template <int extra>
void m2l_body(void* b[], void* arg) {
  timed(arg, [&](const auto& c) { fmm::m2l(c, work(b[0]), in(b[1 + extra]), out(b[2 + extra])); });
}
template <int extra>
void p2l_body(void* b[], void* arg) {
  timed(arg, [&](const auto& c) { fmm::p2l(c, work(b[0]), in(b[1 + extra]), out(b[2 + extra])); });
}
template <int extra>
void m2p_body(void* b[], void* arg) {
  timed(arg, [&](const auto& c) {
    fmm::m2p(c, work(b[0]), in(b[1 + extra]), in(b[2 + extra]), out(b[3 + extra]));
  });
}
void p2p_inner_body(void* b[], void* arg) {
  timed(arg, [&](const auto&) { fmm::p2p_inner(work(b[0]), in(b[1]), out(b[2])); });
}
void p2p_pair_body(void* b[], void* arg) {
  timed(arg,
        [&](const auto&) { fmm::p2p_pair(work(b[0]), in(b[1]), in(b[2]), out(b[3]), out(b[4])); });
}
template <int extra>
void expand_body(void* b[], void* arg) {
  timed(arg, [&](const auto& c) { fmm::expand(c, in(b[extra]), out(b[1 + extra])); });
}
template <int extra>
void l2l_body(void* b[], void* arg) {
  timed(arg, [&](const auto& c) { fmm::l2l(c, work(b[0]), in(b[1 + extra]), out(b[2 + extra])); });
}
template <int extra>
void l2p_body(void* b[], void* arg) {
  timed(arg, [&](const auto& c) {
    fmm::l2p(c, work(b[0]), in(b[1 + extra]), in(b[2 + extra]), out(b[3 + extra]));
  });
}

// The footprint of a history-based model: the work estimate in steps of 2^(1/8) (9%), so that
// tasks of about the same size share a history (StarPU's default footprint hashes the sizes of
// the data, which here are the whole groups' arrays and the work list: nearly every task would
// get a history of its own, none calibrated).
uint32_t interactions_footprint(starpu_task* task) {
  const auto& arg = *static_cast<const TaskArg*>(task->cl_arg);
  const auto step =
      static_cast<uint32_t>(std::lround(8 * std::log2(std::max(1.0, arg.interactions))));
  return starpu_hash_crc32c_be(step, 0);
}

// The size a regression model fits its time to.
size_t interactions_size(starpu_task* task, unsigned /*nimpl*/) {
  return static_cast<size_t>(static_cast<const TaskArg*>(task->cl_arg)->interactions);
}

}  // namespace

starpu_cpu_func_t cpu_body(Kernel kernel, bool tables) {
  const bool t = tables;
  switch (kernel) {
    case Kernel::p2m:
      return t ? p2m_body<1> : p2m_body<0>;
    case Kernel::m2m:
      return t ? m2m_body<1> : m2m_body<0>;
    case Kernel::compress:
      return t ? compress_body<1> : compress_body<0>;
    case Kernel::m2l:
      return t ? m2l_body<1> : m2l_body<0>;
    case Kernel::p2l:
      return t ? p2l_body<1> : p2l_body<0>;
    case Kernel::m2p:
      return t ? m2p_body<1> : m2p_body<0>;
    case Kernel::p2p_inner:
      return p2p_inner_body;
    case Kernel::p2p_pair:
      return p2p_pair_body;
    case Kernel::expand:
      return t ? expand_body<1> : expand_body<0>;
    case Kernel::l2l:
      return t ? l2l_body<1> : l2l_body<0>;
    case Kernel::l2p:
      return t ? l2p_body<1> : l2p_body<0>;
  }
  return nullptr;
}

std::vector<starpu_data_access_mode> codelet_modes(Kernel kernel, starpu_data_access_mode results,
                                                   bool tables) {
  std::vector<starpu_data_access_mode> modes;
  switch (kernel) {
    case Kernel::p2m:
    case Kernel::m2m:
    case Kernel::m2l:
    case Kernel::p2l:
    case Kernel::l2l:
      modes = {STARPU_R, STARPU_R, commute};
      break;
    case Kernel::compress:
      modes = {STARPU_R, STARPU_W};
      break;
    case Kernel::expand:
      modes = {STARPU_R, commute};
      break;
    case Kernel::m2p:
    case Kernel::l2p:
      modes = {STARPU_R, STARPU_R, STARPU_R, results};
      break;
    case Kernel::p2p_inner:
      return {STARPU_R, STARPU_R, results};
    case Kernel::p2p_pair:
      return {STARPU_R, STARPU_R, STARPU_R, results, results};
  }
  if (tables) modes.insert(modes.begin(), STARPU_R);  // all read: where it goes is the same
  return modes;
}

std::vector<starpu_data_handle_t> task_buffers(const fmm::GroupTree& groups, std::size_t t,
                                               const GroupHandles& h,
                                               starpu_data_handle_t m2l_operators,
                                               starpu_data_handle_t tables) {
  const fmm::GroupTask& task = groups.tasks()[t];
  const std::size_t src = task.source, dst = task.target;
  std::vector<starpu_data_handle_t> buffers;
  switch (task.kernel) {
    case Kernel::p2m:
      buffers = {h.work[t], h.points[src], h.multipoles[dst]};
      break;
    case Kernel::m2m:
      buffers = {h.work[t], h.multipoles[src], h.multipoles[dst]};
      break;
    case Kernel::compress:
      buffers = {h.multipoles[src], h.compressed_multipoles[src]};
      break;
    case Kernel::m2l:
      buffers = {h.work[t], h.compressed_multipoles[src], h.compressed_locals[dst]};
      break;
    case Kernel::p2l:
      buffers = {h.work[t], h.points[src], h.locals[dst]};
      break;
    case Kernel::m2p:
      buffers = {h.work[t], h.multipoles[src], h.points[dst], h.results[dst]};
      break;
    case Kernel::p2p_inner:
      buffers = {h.work[t], h.points[src], h.results[src]};
      break;
    case Kernel::p2p_pair:
      buffers = {h.work[t], h.points[src], h.points[dst], h.results[src], h.results[dst]};
      break;
    case Kernel::expand:
      buffers = {h.compressed_locals[src], h.locals[src]};
      break;
    case Kernel::l2l:
      buffers = {h.work[t], h.locals[src], h.locals[dst]};
      break;
    case Kernel::l2p:
      buffers = {h.work[t], h.locals[src], h.points[dst], h.results[dst]};
      break;
  }
  const bool listed = !task.work.empty();
  if (task.kernel == Kernel::m2l) {
    if (m2l_operators != nullptr) buffers.insert(buffers.begin() + 1, m2l_operators);
  } else if (task.kernel != Kernel::p2p_inner && task.kernel != Kernel::p2p_pair &&
             tables != nullptr) {
    buffers.insert(buffers.begin() + (listed ? 1 : 0), tables);
  }
  return buffers;
}

void GroupHandles::unregister_all() {
  for (auto* list : {&points, &results, &work})
    for (starpu_data_handle_t handle : *list)
      if (handle != nullptr) starpu_data_unregister(handle);
  for (auto* list : {&multipoles, &compressed_multipoles, &compressed_locals, &locals})
    for (starpu_data_handle_t handle : *list) starpu_data_unregister_no_coherency(handle);
}

void zero_body(void* b[], void*) {
  for (double& x : out(b[0])) x = 0;
}

void sum_body(void* b[], void*) {
  const Out into = out(b[0]);
  const In from = in(b[1]);
  for (std::size_t i = 0; i < into.size(); ++i) into[i] += from[i];
}

void heteroprio_buckets(unsigned context) {
  starpu_heteroprio_set_nb_prios(context, STARPU_CPU_IDX, priority_levels);
  for (unsigned i = 0; i < priority_levels; ++i) {
    starpu_heteroprio_set_mapping(context, STARPU_CPU_IDX, i, priority_levels - 1 - i);
    starpu_heteroprio_set_faster_arch(context, STARPU_CPU_IDX, i);
  }
}

Models::Models(const std::string& prefix) {
  for (int k = 0; k < fmm::kernel_count; ++k) {
    const std::string name = fmm::to_string(static_cast<Kernel>(k));
    history_symbols[k] = prefix + "_history_" + name;
    regression_symbols[k] = prefix + "_regression_" + name;
    history[k].type = STARPU_HISTORY_BASED;
    history[k].symbol = history_symbols[k].c_str();
    history[k].footprint = interactions_footprint;
    regression[k].type = STARPU_NL_REGRESSION_BASED;
    regression[k].symbol = regression_symbols[k].c_str();
    regression[k].size_base = interactions_size;
  }
}

bool reads_models(const std::string& scheduler) {
  return scheduler.rfind("dm", 0) == 0 || scheduler.find("heft") != std::string::npos;
}

}  // namespace bench::starpu_fmm
