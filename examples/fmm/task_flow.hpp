// The FMM's task flow, shared by TaskProgram (one runtime) and fmm_mpi (mpi_main.cpp: the ranks
// of a versa::mpi::Runtime): the task types, the handles of one evaluation's arrays and the
// submission of the group tree's tasks, written once for either runtime. Internal to the example.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "group_data.hpp"
#include "group_kernels.hpp"
#include "group_kernels_cuda.hpp"
#include "group_kernels_emulated.hpp"
#include "group_tree.hpp"
#include "m2l_batches.hpp"
#include "task_program.hpp"
#include "versa/versa.hpp"

namespace fmm::flow {

using versa::Span;

inline std::span<const std::int32_t> in(Span<const std::int32_t> s) { return {s.data(), s.size()}; }
inline std::span<const double> in(Span<const double> s) { return {s.data(), s.size()}; }
inline std::span<double> out(Span<double> s) { return {s.data(), s.size()}; }

using Work = Span<const std::int32_t>;
using In = Span<const double>;
using Out = Span<double>;

// The task types. Their CPU bodies call the kernels through lambdas, not the kernels'
// addresses, so the call is inlined into the task's invoker. The kernels with CUDA bodies
// (group_kernels_cuda.hpp) run the same device kernels on the emulated device
// (group_kernels_emulated.hpp); Versa drops CUDA bodies in a build without the CUDA backend. The
// context is the current evaluation's (TaskProgram::evaluate sets it before it submits and waits
// for the tasks before it changes).
inline auto p2m_type(const KernelContext* c) {
  return versa::task_type("p2m").cpu(
      [c](Work w, In points, Out m) { p2m(*c, in(w), in(points), out(m)); });
}
inline auto m2m_type(const KernelContext* c) {
  return versa::task_type("m2m").cpu(
      [c](Work w, In child, Out parent) { m2m(*c, in(w), in(child), out(parent)); });
}
inline auto compress_type(const KernelContext* c) {
  return versa::task_type("compress").cpu([c](In m, Out compressed) {
    compress(*c, in(m), out(compressed));
  });
}
inline auto m2l_type(const KernelContext* c) {
  return versa::task_type("m2l").cpu(
      [c](Work w, In source, Out target) { m2l(*c, in(w), in(source), out(target)); });
}
// M2L with its operators as a handle, so that they travel to a device once and stay there; the
// CPU body takes them from the interpolation instead. Used when the runtime has devices.
inline auto m2l_with_operators_type(const KernelContext* c) {
  return versa::task_type("m2l")
      .cpu([c](Work w, In, In source, Out target) { m2l(*c, in(w), in(source), out(target)); })
      .emulated([c](Work w, In operators, In source, Out target) {
        emulated::m2l(w.data(), w.size(), operators.data(), c->interpolation->rank(), source.data(),
                      target.data(), c->width);
      })
      .cuda([c](versa::CudaContext& gpu, Work w, In operators, In source, Out target) {
        cuda::m2l(gpu, w.data(), w.size(), operators.data(), c->interpolation->rank(),
                  source.data(), target.data(), c->width);
      });
}
// The same with the device bodies running the task's M2L as batched products, whose plan (made
// on the host from the work list at submit) is the task's value; the CPU body does as above.
inline auto m2l_products_type(const KernelContext* c) {
  return versa::task_type("m2l")
      .cpu([c](const M2LBatches&, Work w, In, In source, Out target) {
        m2l(*c, in(w), in(source), out(target));
      })
      .emulated([c](const M2LBatches& plan, Work w, In operators, In source, Out target) {
        emulated::m2l_products(w.data(), plan, operators.data(), c->interpolation->rank(),
                               source.data(), target.data(), c->width);
      })
      .cuda([c](versa::CudaContext& gpu, const M2LBatches& plan, Work w, In operators, In source,
                Out target) {
        cuda::m2l_products(gpu, w.data(), plan, operators.data(), c->interpolation->rank(),
                           source.data(), target.data(), c->width);
      });
}
// The upward and downward passes, P2L and M2P, with the device tables
// (ChebyshevInterpolation::device_tables) as a handle (their first access), so that they travel to
// a device once and stay there, and every pass may run there: the emulated bodies run the CUDA
// kernels on the CPU; the CPU bodies take the operators from the interpolation. Used when the
// runtime has devices.
inline auto p2m_on_devices_type(const KernelContext* c) {
  return versa::task_type("p2m")
      .cpu([c](In, Work w, In points, Out m) { p2m(*c, in(w), in(points), out(m)); })
      .emulated([c](In tables, Work w, In points, Out m) {
        emulated::p2m(w.data(), w.size(), tables.data(), c->interpolation->order(), c->cube(),
                      points.data(), points.size() / 4, m.data());
      })
      .cuda([c](versa::CudaContext& gpu, In tables, Work w, In points, Out m) {
        cuda::p2m(gpu, w.data(), w.size(), tables.data(), c->interpolation->order(), c->cube(),
                  points.data(), points.size() / 4, m.data());
      });
}
inline auto m2m_on_devices_type(const KernelContext* c) {
  return versa::task_type("m2m")
      .cpu([c](In, Work w, In child, Out parent) { m2m(*c, in(w), in(child), out(parent)); })
      .emulated([c](In tables, Work w, In child, Out parent) {
        emulated::m2m(w.data(), w.size(), tables.data(), c->interpolation->order(), child.data(),
                      parent.data());
      })
      .cuda([c](versa::CudaContext& gpu, In tables, Work w, In child, Out parent) {
        cuda::m2m(gpu, w.data(), w.size(), tables.data(), c->interpolation->order(), child.data(),
                  parent.data());
      });
}
inline auto compress_on_devices_type(const KernelContext* c) {
  return versa::task_type("compress")
      .cpu([c](In, In m, Out compressed) { compress(*c, in(m), out(compressed)); })
      .emulated([c](In tables, In m, Out compressed) {
        const ChebyshevInterpolation& i = *c->interpolation;
        emulated::compress(tables.data(), i.order(), i.rank(), m.data(), compressed.data(),
                           m.size() / i.nodes());
      })
      .cuda([c](versa::CudaContext& gpu, In tables, In m, Out compressed) {
        const ChebyshevInterpolation& i = *c->interpolation;
        cuda::compress(gpu, tables.data(), i.order(), i.rank(), m.data(), compressed.data(),
                       m.size() / i.nodes());
      });
}
inline auto expand_on_devices_type(const KernelContext* c) {
  return versa::task_type("expand")
      .cpu([c](In, In compressed, Out locals) { expand(*c, in(compressed), out(locals)); })
      .emulated([c](In tables, In compressed, Out locals) {
        const ChebyshevInterpolation& i = *c->interpolation;
        emulated::expand(tables.data(), i.order(), i.rank(), compressed.data(), locals.data(),
                         locals.size() / i.nodes());
      })
      .cuda([c](versa::CudaContext& gpu, In tables, In compressed, Out locals) {
        const ChebyshevInterpolation& i = *c->interpolation;
        cuda::expand(gpu, tables.data(), i.order(), i.rank(), compressed.data(), locals.data(),
                     locals.size() / i.nodes());
      });
}
inline auto l2l_on_devices_type(const KernelContext* c) {
  return versa::task_type("l2l")
      .cpu([c](In, Work w, In parent, Out child) { l2l(*c, in(w), in(parent), out(child)); })
      .emulated([c](In tables, Work w, In parent, Out child) {
        emulated::l2l(w.data(), w.size(), tables.data(), c->interpolation->order(), parent.data(),
                      child.data());
      })
      .cuda([c](versa::CudaContext& gpu, In tables, Work w, In parent, Out child) {
        cuda::l2l(gpu, w.data(), w.size(), tables.data(), c->interpolation->order(), parent.data(),
                  child.data());
      });
}
inline auto l2p_on_devices_type(const KernelContext* c) {
  return versa::task_type("l2p")
      .cpu([c](In, Work w, In locals, In points, Out results) {
        l2p(*c, in(w), in(locals), in(points), out(results));
      })
      .emulated([c](In tables, Work w, In locals, In points, Out results) {
        emulated::l2p(w.data(), w.size(), tables.data(), c->interpolation->order(), c->cube(),
                      locals.data(), points.data(), points.size() / 4, results.data());
      })
      .cuda([c](versa::CudaContext& gpu, In tables, Work w, In locals, In points, Out results) {
        cuda::l2p(gpu, w.data(), w.size(), tables.data(), c->interpolation->order(), c->cube(),
                  locals.data(), points.data(), points.size() / 4, results.data());
      });
}
inline auto p2l_on_devices_type(const KernelContext* c) {
  return versa::task_type("p2l")
      .cpu([c](In, Work w, In points, Out locals) { p2l(*c, in(w), in(points), out(locals)); })
      .emulated([c](In tables, Work w, In points, Out locals) {
        emulated::p2l(w.data(), w.size(), tables.data(), c->interpolation->order(), c->cube(),
                      points.data(), points.size() / 4, locals.data());
      })
      .cuda([c](versa::CudaContext& gpu, In tables, Work w, In points, Out locals) {
        cuda::p2l(gpu, w.data(), w.size(), tables.data(), c->interpolation->order(), c->cube(),
                  points.data(), points.size() / 4, locals.data());
      });
}
inline auto m2p_on_devices_type(const KernelContext* c) {
  return versa::task_type("m2p")
      .cpu([c](In, Work w, In m, In points, Out results) {
        m2p(*c, in(w), in(m), in(points), out(results));
      })
      .emulated([c](In tables, Work w, In m, In points, Out results) {
        emulated::m2p(w.data(), w.size(), tables.data(), c->interpolation->order(), c->cube(),
                      m.data(), points.data(), points.size() / 4, results.data());
      })
      .cuda([c](versa::CudaContext& gpu, In tables, Work w, In m, In points, Out results) {
        cuda::m2p(gpu, w.data(), w.size(), tables.data(), c->interpolation->order(), c->cube(),
                  m.data(), points.data(), points.size() / 4, results.data());
      });
}
inline auto p2l_type(const KernelContext* c) {
  return versa::task_type("p2l").cpu(
      [c](Work w, In points, Out locals) { p2l(*c, in(w), in(points), out(locals)); });
}
inline auto m2p_type(const KernelContext* c) {
  return versa::task_type("m2p").cpu([c](Work w, In m, In points, Out results) {
    m2p(*c, in(w), in(m), in(points), out(results));
  });
}
// The point pairs the P2P tasks have made interact on the CPU and on emulated devices
// (p2p_pairs in group_kernels.hpp), for the pairs per second of each kind; those of a GPU are the
// rest, since a CUDA body's work list lies in device memory. Each task adds its own; relaxed,
// because they are read after Runtime::wait_all, which orders every task before.
struct NearFieldPairs {
  std::atomic<double> cpu{0}, emulated{0};
};

inline auto p2p_inner_type(NearFieldPairs* pairs) {
  auto count = [](Work w, std::atomic<double>& total) {
    total.fetch_add(p2p_pairs(in(w), Kernel::p2p_inner), std::memory_order_relaxed);
  };
  return versa::task_type("p2p_inner")
      .cpu([pairs, count](const steps::NearFieldRows&, Work w, In points, Out results) {
        p2p_inner(in(w), in(points), out(results));
        count(w, pairs->cpu);
      })
      .emulated([pairs, count](const steps::NearFieldRows& rows, Work w, In points, Out results) {
        emulated::p2p(rows, w.data(), points.data(), points.size() / 4, points.data(),
                      points.size() / 4, results.data(), results.data(), true);
        count(w, pairs->emulated);
      })
      .cuda([](versa::CudaContext& gpu, const steps::NearFieldRows& rows, Work w, In points,
               Out results) {
        cuda::p2p(gpu, rows, w.data(), points.data(), points.size() / 4, points.data(),
                  points.size() / 4, results.data(), results.data(), true);
      });
}
inline auto p2p_pair_type(NearFieldPairs* pairs) {
  auto count = [](Work w, std::atomic<double>& total) {
    total.fetch_add(p2p_pairs(in(w), Kernel::p2p_pair), std::memory_order_relaxed);
  };
  return versa::task_type("p2p_pair")
      .cpu([pairs, count](const steps::NearFieldRows&, Work w, In a, In b, Out ra, Out rb) {
        p2p_pair(in(w), in(a), in(b), out(ra), out(rb));
        count(w, pairs->cpu);
      })
      .emulated(
          [pairs, count](const steps::NearFieldRows& rows, Work w, In a, In b, Out ra, Out rb) {
            emulated::p2p(rows, w.data(), a.data(), a.size() / 4, b.data(), b.size() / 4, ra.data(),
                          rb.data(), false);
            count(w, pairs->emulated);
          })
      .cuda([](versa::CudaContext& gpu, const steps::NearFieldRows& rows, Work w, In a, In b,
               Out ra, Out rb) {
        cuda::p2p(gpu, rows, w.data(), a.data(), a.size() / 4, b.data(), b.size() / 4, ra.data(),
                  rb.data(), false);
      });
}
inline auto expand_type(const KernelContext* c) {
  return versa::task_type("expand").cpu(
      [c](In compressed, Out locals) { expand(*c, in(compressed), out(locals)); });
}
inline auto l2l_type(const KernelContext* c) {
  return versa::task_type("l2l").cpu(
      [c](Work w, In parent, Out child) { l2l(*c, in(w), in(parent), out(child)); });
}
inline auto l2p_type(const KernelContext* c) {
  return versa::task_type("l2p").cpu([c](Work w, In locals, In points, Out results) {
    l2p(*c, in(w), in(locals), in(points), out(results));
  });
}

struct TaskTypes {
  explicit TaskTypes(const Placements& rules)
      : p2m(p2m_type(&context).placement(rules[int(Kernel::p2m)])),
        m2m(m2m_type(&context).placement(rules[int(Kernel::m2m)])),
        compress(compress_type(&context).placement(rules[int(Kernel::compress)])),
        m2l(m2l_type(&context).placement(rules[int(Kernel::m2l)])),
        m2l_with_operators(m2l_with_operators_type(&context).placement(rules[int(Kernel::m2l)])),
        m2l_products(m2l_products_type(&context).placement(rules[int(Kernel::m2l)])),
        p2l(p2l_type(&context).placement(rules[int(Kernel::p2l)])),
        m2p(m2p_type(&context).placement(rules[int(Kernel::m2p)])),
        p2p_inner(p2p_inner_type(&pairs).placement(rules[int(Kernel::p2p_inner)])),
        p2p_pair(p2p_pair_type(&pairs).placement(rules[int(Kernel::p2p_pair)])),
        expand(expand_type(&context).placement(rules[int(Kernel::expand)])),
        l2l(l2l_type(&context).placement(rules[int(Kernel::l2l)])),
        l2p(l2p_type(&context).placement(rules[int(Kernel::l2p)])),
        p2m_on_devices(p2m_on_devices_type(&context).placement(rules[int(Kernel::p2m)])),
        m2m_on_devices(m2m_on_devices_type(&context).placement(rules[int(Kernel::m2m)])),
        compress_on_devices(
            compress_on_devices_type(&context).placement(rules[int(Kernel::compress)])),
        expand_on_devices(expand_on_devices_type(&context).placement(rules[int(Kernel::expand)])),
        l2l_on_devices(l2l_on_devices_type(&context).placement(rules[int(Kernel::l2l)])),
        l2p_on_devices(l2p_on_devices_type(&context).placement(rules[int(Kernel::l2p)])),
        p2l_on_devices(p2l_on_devices_type(&context).placement(rules[int(Kernel::p2l)])),
        m2p_on_devices(m2p_on_devices_type(&context).placement(rules[int(Kernel::m2p)])) {}

  KernelContext context;  // first: the types point to it and to `pairs`
  NearFieldPairs pairs;
  decltype(p2m_type(nullptr)) p2m;
  decltype(m2m_type(nullptr)) m2m;
  decltype(compress_type(nullptr)) compress;
  decltype(m2l_type(nullptr)) m2l;
  decltype(m2l_with_operators_type(nullptr)) m2l_with_operators;
  decltype(m2l_products_type(nullptr)) m2l_products;
  decltype(p2l_type(nullptr)) p2l;
  decltype(m2p_type(nullptr)) m2p;
  decltype(p2p_inner_type(nullptr)) p2p_inner;
  decltype(p2p_pair_type(nullptr)) p2p_pair;
  decltype(expand_type(nullptr)) expand;
  decltype(l2l_type(nullptr)) l2l;
  decltype(l2p_type(nullptr)) l2p;
  decltype(p2m_on_devices_type(nullptr)) p2m_on_devices;
  decltype(m2m_on_devices_type(nullptr)) m2m_on_devices;
  decltype(compress_on_devices_type(nullptr)) compress_on_devices;
  decltype(expand_on_devices_type(nullptr)) expand_on_devices;
  decltype(l2l_on_devices_type(nullptr)) l2l_on_devices;
  decltype(l2p_on_devices_type(nullptr)) l2p_on_devices;
  decltype(p2l_on_devices_type(nullptr)) p2l_on_devices;
  decltype(m2p_on_devices_type(nullptr)) m2p_on_devices;
};

// The rank that owns each group's arrays (versa::mpi), and so runs the tasks that write them;
// empty for one runtime.
struct Owners {
  std::vector<int> particle_groups, cell_groups;
  int particle(std::size_t g) const { return particle_groups.empty() ? 0 : particle_groups[g]; }
  int cell(std::size_t g) const { return cell_groups.empty() ? 0 : cell_groups[g]; }

  // fmm_mpi's (and its StarPU-MPI twin's) owners of the groups of a tree of `points` points on
  // `ranks` ranks: contiguous ranges of each level's cells in Morton order (a cell group holds
  // consecutive cells of one level), and of the sorted points for the particle groups. Rank r
  // owns the part of space between the same two points of the curve at every level, so M2M and
  // L2L stay on their rank except at the ranges' ends, and a group goes to the rank in whose
  // range it starts.
  static Owners in_morton_ranges(const GroupTree& groups, std::size_t points, int ranks) {
    const auto p = static_cast<std::size_t>(ranks);
    Owners owners;
    for (const ParticleGroup& g : groups.particle_groups())
      owners.particle_groups.push_back(static_cast<int>(g.first_point * p / points));
    std::vector<std::size_t> cells_per_level;
    for (const CellGroup& g : groups.cell_groups()) {
      const auto level = static_cast<std::size_t>(g.level);
      if (cells_per_level.size() <= level) cells_per_level.resize(level + 1, 0);
      cells_per_level[level] = std::max(cells_per_level[level], g.first_cell + g.cell_count);
    }
    for (const CellGroup& g : groups.cell_groups())
      owners.cell_groups.push_back(
          static_cast<int>(g.first_cell * p / cells_per_level[static_cast<std::size_t>(g.level)]));
    return owners;
  }
};

// The rank that runs `task`: the owner of the group whose array it writes first (the
// owner-computes rule of versa::mpi, which the work list's owner follows, so that it never
// travels).
inline int executor(const GroupTask& task, const Owners& owners) {
  switch (task.kernel) {
    case Kernel::p2m:
    case Kernel::m2m:
    case Kernel::m2l:
    case Kernel::p2l:
    case Kernel::l2l:
      return owners.cell(task.target);
    case Kernel::compress:
    case Kernel::expand:
      return owners.cell(task.source);
    case Kernel::m2p:
    case Kernel::l2p:
      return owners.particle(task.target);
    case Kernel::p2p_inner:
    case Kernel::p2p_pair:
      return owners.particle(task.source);
  }
  return 0;
}

// The handles of one evaluation's group arrays and work lists. `add(array, owner, name)`
// registers an array with the runtime (the owner matters to versa::mpi only).
struct Handles {
  std::vector<versa::Handle<double>> points, results;
  std::vector<versa::Handle<double>> multipoles, compressed_multipoles, compressed_locals, locals;
  std::vector<versa::Handle<std::int32_t>> work;  // per task; empty handles for none

  template <class Add>
  Handles(const GroupTree& groups, GroupData& data,
          std::vector<std::vector<std::int32_t>>& work_lists, const Owners& owners, Add&& add) {
    // The results and the expansions start at zero (GroupData's arrays): a device makes its
    // copies of them without copying zeros over the host link.
    auto zero = [](versa::Handle<double> handle) {
      if (handle) handle.declare_zero();
      return handle;
    };
    for (std::size_t g = 0; g < groups.particle_groups().size(); ++g) {
      points.push_back(add(data.points(g), owners.particle(g), "points"));
      results.push_back(zero(add(data.results(g), owners.particle(g), "results")));
      results.back().set_reduction(versa::sum<double>());
    }
    // The expansions are intermediate too: what tasks on devices leave in them is not copied
    // home at the end (a CPU task that reads them still gets them).
    auto intermediate = [&zero](versa::Handle<double> handle) {
      if (handle) handle.set_write_back(false);
      return zero(std::move(handle));
    };
    for (std::size_t g = 0; g < groups.cell_groups().size(); ++g) {
      const int owner = owners.cell(g);
      multipoles.push_back(intermediate(add(data.multipoles(g), owner, "multipoles")));
      compressed_multipoles.push_back(
          intermediate(add(data.compressed_multipoles(g), owner, "compressed multipoles")));
      compressed_locals.push_back(
          intermediate(add(data.compressed_locals(g), owner, "compressed locals")));
      locals.push_back(intermediate(add(data.locals(g), owner, "locals")));
    }
    work.resize(work_lists.size());
    for (std::size_t t = 0; t < work_lists.size(); ++t)
      if (!work_lists[t].empty())
        work[t] = add(std::span<std::int32_t>(work_lists[t]), executor(groups.tasks()[t], owners),
                      "work list");
  }
};

// The operators' handles of an evaluation whose tasks may run on devices (TaskProgram's
// constructor makes them): the tables of the other passes, and the M2L operators where they are
// stored per offset. Null where they are not registered (CPUs only). With the M2L tasks' plans
// (PreparedEvaluation::m2l_batches, moved into the tasks), they run on devices as batched
// products; null or empty, through the block kernel.
struct DeviceOperators {
  const versa::Handle<double>* tables = nullptr;
  const versa::Handle<double>* m2l = nullptr;
  std::vector<M2LBatches>* m2l_batches = nullptr;
};

// Submits the group tree's tasks in its order.
template <class Runtime>
void submit_tasks(Runtime& rt, const TaskTypes& types, const GroupTree& groups, Handles& h,
                  const DeviceOperators& operators = {}) {
  // A task of the `plain` type, or with the tables of the `on_devices` type when they are.
  auto submit = [&rt, &operators](const auto& plain, const auto& on_devices, auto&&... accesses) {
    if (operators.tables)
      rt.submit(on_devices, versa::read(*operators.tables), accesses...);
    else
      rt.submit(plain, accesses...);
  };
  for (std::size_t t = 0; t < groups.tasks().size(); ++t) {
    const GroupTask& task = groups.tasks()[t];
    const std::size_t s = task.source, d = task.target;
    const versa::Priority priority = versa::priority(priority_of(task.kernel));
    const versa::Work work = versa::work(task.interactions);
    auto list = [&h, t] { return versa::read(h.work[t]); };
    switch (task.kernel) {
      case Kernel::p2m:
        submit(types.p2m, types.p2m_on_devices, list(), versa::read(h.points[s]),
               versa::commute(h.multipoles[d]), priority, work);
        break;
      case Kernel::m2m:
        submit(types.m2m, types.m2m_on_devices, list(), versa::read(h.multipoles[s]),
               versa::commute(h.multipoles[d]), priority, work);
        break;
      case Kernel::compress:
        submit(types.compress, types.compress_on_devices, versa::read(h.multipoles[s]),
               versa::write_only(h.compressed_multipoles[s]), priority, work);
        break;
      case Kernel::m2l:
        if (!operators.m2l)
          rt.submit(types.m2l, list(), versa::read(h.compressed_multipoles[s]),
                    versa::commute(h.compressed_locals[d]), priority, work);
        else if (!operators.m2l_batches || operators.m2l_batches->empty())
          rt.submit(types.m2l_with_operators, list(), versa::read(*operators.m2l),
                    versa::read(h.compressed_multipoles[s]), versa::commute(h.compressed_locals[d]),
                    priority, work);
        else
          rt.submit(types.m2l_products, versa::value(std::move((*operators.m2l_batches)[t])),
                    list(), versa::read(*operators.m2l), versa::read(h.compressed_multipoles[s]),
                    versa::commute(h.compressed_locals[d]), priority, work);
        break;
      case Kernel::p2l:
        submit(types.p2l, types.p2l_on_devices, list(), versa::read(h.points[s]),
               versa::commute(h.locals[d]), priority, work);
        break;
      case Kernel::m2p:
        submit(types.m2p, types.m2p_on_devices, list(), versa::read(h.multipoles[s]),
               versa::read(h.points[d]), versa::add(h.results[d]), priority, work);
        break;
      case Kernel::p2p_inner:
        rt.submit(types.p2p_inner, versa::value(task.rows), list(), versa::read(h.points[s]),
                  versa::add(h.results[s]), priority, work);
        break;
      case Kernel::p2p_pair:
        rt.submit(types.p2p_pair, versa::value(task.rows), list(), versa::read(h.points[s]),
                  versa::read(h.points[d]), versa::add(h.results[s]), versa::add(h.results[d]),
                  priority, work);
        break;
      case Kernel::expand:
        submit(types.expand, types.expand_on_devices, versa::read(h.compressed_locals[s]),
               versa::commute(h.locals[s]), priority, work);
        break;
      case Kernel::l2l:
        submit(types.l2l, types.l2l_on_devices, list(), versa::read(h.locals[s]),
               versa::commute(h.locals[d]), priority, work);
        break;
      case Kernel::l2p:
        submit(types.l2p, types.l2p_on_devices, list(), versa::read(h.locals[s]),
               versa::read(h.points[d]), versa::add(h.results[d]), priority, work);
        break;
    }
  }
}

}  // namespace fmm::flow
