#include "fmm/starpu_fmm.hpp"

#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/starpu_support.hpp"
#include "fmm/starpu_fmm_tasks.hpp"
#include "group_data.hpp"
#include "m2l_batches.hpp"
#include "octree.hpp"

// Where StarPU and Versa both have CUDA (bench/CMakeLists.txt): the example's CUDA kernels.
#if VERSA_BENCH_STARPU_CUDA
#include <starpu_cublas_v2.h>

#include "group_kernels_cuda.hpp"
#include "versa/cuda.hpp"
#endif

namespace bench {
namespace {

using namespace starpu_fmm;

#if VERSA_BENCH_STARPU_CUDA
// ---- CUDA codelet bodies: the example's kernels (group_kernels_cuda.hpp), as the task
// program's CUDA bodies call them, on the worker's StarPU stream; StarPU waits for the stream
// (STARPU_CUDA_ASYNC).

// The calling CUDA worker's stream and cuBLAS handle (bound to that stream by StarPU), the only
// parts of the context these kernels use.
class WorkerStream final : public versa::CudaContext {
 public:
  explicit WorkerStream(GpuScratch& scratch) : scratch_(scratch) {}

  cudaStream_t stream() override { return starpu_cuda_get_local_stream(); }
  cublasHandle_t cublas() override { return starpu_cublas_get_local_handle(); }
  cusolverDnHandle_t cusolver() override { unused("cuSOLVER"); }
  void* workspace(std::size_t bytes) override {
    GpuScratch::Buffer& buffer = scratch_.buffers.at(starpu_worker_get_id_check());
    if (buffer.bytes < bytes) {
      if (cudaStreamSynchronize(stream()) != cudaSuccess || cudaFree(buffer.data) != cudaSuccess)
        throw std::runtime_error("StarPU FMM: freeing a workspace failed");
      buffer = {};
      if (cudaMalloc(&buffer.data, bytes) != cudaSuccess)
        throw std::runtime_error("StarPU FMM: no device memory for a workspace of " +
                                 std::to_string(bytes) + " bytes");
      buffer.bytes = bytes;
    }
    return buffer.data;
  }
  int device() const override { return starpu_worker_get_devid(starpu_worker_get_id_check()); }
  void check_after(const int*, std::function<std::string(int)>) override {
    unused("a device word check");
  }

 private:
  GpuScratch& scratch_;
  [[noreturn]] static void unused(const char* what) {
    std::fprintf(stderr, "StarPU FMM CUDA worker: a kernel asked for %s\n", what);
    std::abort();
  }
};

// Runs `body` with the task's context and the worker's stream and counts the task; its time is
// the GPU's, which a host clock around the launch does not see. A kernel that throws has met a
// broken device, not a result: StarPU cannot carry the exception back, so the process stops.
template <class Body>
void on_gpu(void* cl_arg, Body body) {
  const auto& arg = *static_cast<const TaskArg*>(cl_arg);
  WorkerStream gpu(*arg.scratch);
  try {
    body(*arg.context, gpu);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "StarPU FMM CUDA worker: %s\n", e.what());
    std::abort();
  }
  arg.clocks->tasks[static_cast<std::size_t>(arg.kernel)].fetch_add(1, std::memory_order_relaxed);
}

void m2l_cuda_body(void* b[], void* arg) {
  on_gpu(arg, [&](const fmm::KernelContext& c, versa::CudaContext& gpu) {
    const WorkList w = work(b[0]);
    const fmm::M2LBatches* batches = static_cast<const TaskArg*>(arg)->m2l_batches;
    if (batches)
      fmm::cuda::m2l_products(gpu, w.data(), *batches, in(b[1]).data(), c.interpolation->rank(),
                              in(b[2]).data(), out(b[3]).data(), c.width);
    else
      fmm::cuda::m2l(gpu, w.data(), w.size(), in(b[1]).data(), c.interpolation->rank(),
                     in(b[2]).data(), out(b[3]).data(), c.width);
  });
}
void p2p_inner_cuda_body(void* b[], void* arg) {
  on_gpu(arg, [&](const fmm::KernelContext&, versa::CudaContext& gpu) {
    const In points = in(b[1]);
    const Out results = out(b[2]);
    fmm::cuda::p2p(gpu, static_cast<const TaskArg*>(arg)->rows, work(b[0]).data(), points.data(),
                   points.size() / 4, points.data(), points.size() / 4, results.data(),
                   results.data(), true);
  });
}
void p2p_pair_cuda_body(void* b[], void* arg) {
  on_gpu(arg, [&](const fmm::KernelContext&, versa::CudaContext& gpu) {
    const In a = in(b[1]), points_b = in(b[2]);
    fmm::cuda::p2p(gpu, static_cast<const TaskArg*>(arg)->rows, work(b[0]).data(), a.data(),
                   a.size() / 4, points_b.data(), points_b.size() / 4, out(b[3]).data(),
                   out(b[4]).data(), false);
  });
}

// The kernels that read the operator tables (b[1], or b[0] without a work list).
void p2m_cuda_body(void* b[], void* arg) {
  on_gpu(arg, [&](const fmm::KernelContext& c, versa::CudaContext& gpu) {
    const WorkList w = work(b[0]);
    const In points = in(b[2]);
    fmm::cuda::p2m(gpu, w.data(), w.size(), in(b[1]).data(), c.interpolation->order(), c.cube(),
                   points.data(), points.size() / 4, out(b[3]).data());
  });
}
void m2m_cuda_body(void* b[], void* arg) {
  on_gpu(arg, [&](const fmm::KernelContext& c, versa::CudaContext& gpu) {
    const WorkList w = work(b[0]);
    fmm::cuda::m2m(gpu, w.data(), w.size(), in(b[1]).data(), c.interpolation->order(),
                   in(b[2]).data(), out(b[3]).data());
  });
}
void compress_cuda_body(void* b[], void* arg) {
  on_gpu(arg, [&](const fmm::KernelContext& c, versa::CudaContext& gpu) {
    const fmm::ChebyshevInterpolation& i = *c.interpolation;
    const In multipoles = in(b[1]);
    fmm::cuda::compress(gpu, in(b[0]).data(), i.order(), i.rank(), multipoles.data(),
                        out(b[2]).data(), multipoles.size() / i.nodes());
  });
}
void p2l_cuda_body(void* b[], void* arg) {
  on_gpu(arg, [&](const fmm::KernelContext& c, versa::CudaContext& gpu) {
    const WorkList w = work(b[0]);
    const In points = in(b[2]);
    fmm::cuda::p2l(gpu, w.data(), w.size(), in(b[1]).data(), c.interpolation->order(), c.cube(),
                   points.data(), points.size() / 4, out(b[3]).data());
  });
}
void m2p_cuda_body(void* b[], void* arg) {
  on_gpu(arg, [&](const fmm::KernelContext& c, versa::CudaContext& gpu) {
    const WorkList w = work(b[0]);
    const In points = in(b[3]);
    fmm::cuda::m2p(gpu, w.data(), w.size(), in(b[1]).data(), c.interpolation->order(), c.cube(),
                   in(b[2]).data(), points.data(), points.size() / 4, out(b[4]).data());
  });
}
void expand_cuda_body(void* b[], void* arg) {
  on_gpu(arg, [&](const fmm::KernelContext& c, versa::CudaContext& gpu) {
    const fmm::ChebyshevInterpolation& i = *c.interpolation;
    const Out locals = out(b[2]);
    fmm::cuda::expand(gpu, in(b[0]).data(), i.order(), i.rank(), in(b[1]).data(), locals.data(),
                      locals.size() / i.nodes());
  });
}
void l2l_cuda_body(void* b[], void* arg) {
  on_gpu(arg, [&](const fmm::KernelContext& c, versa::CudaContext& gpu) {
    const WorkList w = work(b[0]);
    fmm::cuda::l2l(gpu, w.data(), w.size(), in(b[1]).data(), c.interpolation->order(),
                   in(b[2]).data(), out(b[3]).data());
  });
}
void l2p_cuda_body(void* b[], void* arg) {
  on_gpu(arg, [&](const fmm::KernelContext& c, versa::CudaContext& gpu) {
    const WorkList w = work(b[0]);
    const In points = in(b[3]);
    fmm::cuda::l2p(gpu, w.data(), w.size(), in(b[1]).data(), c.interpolation->order(), c.cube(),
                   in(b[2]).data(), points.data(), points.size() / 4, out(b[4]).data());
  });
}

// StarPU calls an initialisation codelet's CUDA body before the task that needs the data, on
// that task's worker, whose stream then runs the task.
void zero_cuda_body(void* b[], void*) {
  const Out array = out(b[0]);
  if (cudaMemsetAsync(array.data(), 0, array.size_bytes(), starpu_cuda_get_local_stream()) !=
      cudaSuccess) {
    std::fprintf(stderr, "StarPU FMM CUDA worker: cudaMemsetAsync failed\n");
    std::abort();
  }
}

// Gives `cl` the CUDA body `body`.
void add_cuda(starpu_codelet& cl, starpu_cuda_func_t body) {
  cl.where |= STARPU_CUDA;
  cl.cuda_funcs[0] = body;
  cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
}
#endif

// One history per kernel and kind, calibrated across runs (their files are StarPU's).
Models& models() {
  static Models instance("versa_bench_fmm");
  return instance;
}

// One evaluation's registered group arrays and work lists, unregistered on destruction, which
// for a STARPU_REDUX result also merges the workers' copies into it.
struct Registration : GroupHandles {
  static starpu_data_handle_t vector(const void* data, std::size_t count, std::size_t size) {
    starpu_data_handle_t handle = nullptr;
    // Registered in place; the read-only ones (points, work lists) are only read.
    starpu_vector_data_register(&handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data),
                                static_cast<uint32_t>(count), size);
    return handle;
  }
  static starpu_data_handle_t doubles(std::span<double> array) {
    return vector(array.data(), array.size(), sizeof(double));
  }

  Registration(const fmm::GroupTree& groups, fmm::GroupData& data, bool redux, starpu_codelet* sum,
               starpu_codelet* zero) {
    for (std::size_t g = 0; g < groups.particle_groups().size(); ++g) {
      points.push_back(doubles(data.points(g)));
      results.push_back(doubles(data.results(g)));
      if (redux) starpu_data_set_reduction_methods(results.back(), sum, zero);
    }
    // The expansions are intermediate, as in Versa's flow, where they are declared zero and not
    // written back: registered with no home copy (home node -1), each is made on the node of
    // the first task that uses it and zeroed there by `zero`, StarPU's initialisation codelet
    // (on a GPU a memset), so no zeros cross a host link.
    const auto intermediate = [&](std::span<double> array) {
      starpu_data_handle_t handle = nullptr;
      starpu_vector_data_register(&handle, -1, 0, static_cast<uint32_t>(array.size()),
                                  sizeof(double));
      starpu_data_set_reduction_methods(handle, sum, zero);
      return handle;
    };
    for (std::size_t g = 0; g < groups.cell_groups().size(); ++g) {
      multipoles.push_back(intermediate(data.multipoles(g)));
      compressed_multipoles.push_back(intermediate(data.compressed_multipoles(g)));
      compressed_locals.push_back(intermediate(data.compressed_locals(g)));
      locals.push_back(intermediate(data.locals(g)));
    }
    for (const fmm::GroupTask& task : groups.tasks())
      work.push_back(task.work.empty()
                         ? nullptr
                         : vector(task.work.data(), task.work.size(), sizeof(std::int32_t)));
  }

  ~Registration() { unregister_all(); }

  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;
};

}  // namespace

// ---- Session: StarPU's lifetime and the codelets

struct StarpuFmm::Session {
  Session(const fmm::Solver& solver, const StarpuFmmConfig& config)
      : results(config.results == ResultsAccess::redux ? STARPU_REDUX : commute) {
    const int n = config.workers > 0
                      ? config.workers
                      : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (config.gpu) {
      if (!gpu_built())
        throw std::invalid_argument("StarPU FMM: this build's StarPU or Versa has no CUDA");
      if (config.results == ResultsAccess::redux)
        throw std::invalid_argument("StarPU FMM on GPUs: redux results need CUDA reductions");
      if (config.scheduler == "heteroprio")
        throw std::invalid_argument("StarPU FMM on GPUs: heteroprio's buckets are CPU only");
      m2l_products = config.m2l_products;
      starpu_conf conf = cpu_cuda_conf(config.scheduler.c_str(), n);
      check(starpu_init(&conf), "starpu_init");
      if (starpu_cuda_worker_get_count() == 0) {
        starpu_shutdown();
        throw std::runtime_error("StarPU FMM: StarPU found no GPU");
      }
      starpu_cublas_init();  // compression and expansion on a GPU are cuBLAS products
      scratch.buffers.resize(starpu_worker_get_count());
      // On a GPU, M2L reads the operators by offset and the other passes the operator tables,
      // as the task program's do.
      m2l_operators = solver.operators().m2l_operators();
      if (!m2l_operators.empty())
        m2l_operators_handle =
            Registration::vector(m2l_operators.data(), m2l_operators.size(), sizeof(double));
      tables = solver.operators().device_tables();
      tables_handle = Registration::vector(tables.data(), tables.size(), sizeof(double));
    } else {
      if (config.m2l_products)
        throw std::invalid_argument("StarPU FMM: M2L as batched products needs GPUs");
      start_starpu(config.scheduler.c_str(), n,
                   config.scheduler == "heteroprio" ? heteroprio_buckets : nullptr);
    }
    workers = static_cast<int>(starpu_cpu_worker_get_count());
    gpus = static_cast<int>(starpu_cuda_worker_get_count());
    min_priority = starpu_sched_get_min_priority();
    max_priority = starpu_sched_get_max_priority();
    Models& m = models();
    const bool with_models = reads_models(config.scheduler);
    // With GPUs, the kernels with CUDA bodies read the tables (M2L its operators) too.
    for (int k = 0; k < fmm::kernel_count; ++k) {
      const auto kernel = static_cast<Kernel>(k);
      const bool extra =
          kernel == Kernel::m2l ? m2l_operators_handle != nullptr : tables_handle != nullptr;
      const std::vector<starpu_data_access_mode> modes = codelet_modes(kernel, results, extra);
      starpu_perfmodel* model = !with_models                         ? nullptr
                                : config.model == ModelKind::history ? &m.history[k]
                                                                     : &m.regression[k];
      codelets[k] =
          make_codelet(cpu_body(kernel, extra), static_cast<int>(modes.size()), modes, model);
      codelets[k].name = fmm::to_string(kernel);
    }
    // StarPU 1.3 asserts that the merge codelet's destination is exactly STARPU_RW.
    zero = make_codelet(zero_body, 1, {STARPU_W}, nullptr);
    sum = make_codelet(sum_body, 2, {STARPU_RW, STARPU_R}, nullptr);
#if VERSA_BENCH_STARPU_CUDA
    if (config.gpu) {
      const auto cuda = [this](Kernel k, starpu_cuda_func_t body) {
        add_cuda(codelets[static_cast<std::size_t>(k)], body);
      };
      cuda(Kernel::p2m, p2m_cuda_body);
      cuda(Kernel::m2m, m2m_cuda_body);
      cuda(Kernel::compress, compress_cuda_body);
      if (m2l_operators_handle != nullptr) cuda(Kernel::m2l, m2l_cuda_body);
      cuda(Kernel::p2l, p2l_cuda_body);
      cuda(Kernel::m2p, m2p_cuda_body);
      cuda(Kernel::p2p_inner, p2p_inner_cuda_body);
      cuda(Kernel::p2p_pair, p2p_pair_cuda_body);
      cuda(Kernel::expand, expand_cuda_body);
      cuda(Kernel::l2l, l2l_cuda_body);
      cuda(Kernel::l2p, l2p_cuda_body);
      add_cuda(zero, zero_cuda_body);
    }
#endif
  }

  ~Session() {
    starpu_task_wait_for_all();  // only matters when an evaluation bailed out with tasks in flight
#if VERSA_BENCH_STARPU_CUDA
    for (const GpuScratch::Buffer& buffer : scratch.buffers) cudaFree(buffer.data);
#endif
    if (m2l_operators_handle != nullptr) starpu_data_unregister(m2l_operators_handle);
    if (tables_handle != nullptr) {
      starpu_data_unregister(tables_handle);
      starpu_cublas_shutdown();
    }
    starpu_shutdown();
  }

  int priority(Kernel kernel) const {
    return std::clamp(fmm::priority_of(kernel), min_priority, max_priority);
  }

  starpu_data_access_mode results;  // STARPU_REDUX or commute
  int workers = 0, gpus = 0, min_priority = 0, max_priority = 0;
  // With GPUs: registered, read by every M2L task, and by the tasks of the other passes.
  std::vector<double> m2l_operators, tables;
  starpu_data_handle_t m2l_operators_handle = nullptr, tables_handle = nullptr;
  bool m2l_products = false;  // StarpuFmmConfig::m2l_products
  std::array<starpu_codelet, fmm::kernel_count> codelets{};
  starpu_codelet zero{}, sum{};
  KernelClocks clocks;
  GpuScratch scratch;  // a buffer per worker where there are GPUs
};

StarpuFmm::StarpuFmm(const fmm::Solver& solver, const StarpuFmmConfig& config)
    : solver_(solver), session_(std::make_unique<Session>(solver, config)) {}

StarpuFmm::~StarpuFmm() = default;

int StarpuFmm::workers() const { return session_->workers; }
int StarpuFmm::gpus() const { return session_->gpus; }

bool StarpuFmm::gpu_built() { return VERSA_BENCH_STARPU_CUDA; }

void StarpuFmm::evaluate(const fmm::Points& points, fmm::PhaseTimes& times, fmm::Potentials& into) {
  const auto start = std::chrono::steady_clock::now();
  const fmm::ChebyshevInterpolation& operators = solver_.operators();
  const fmm::Solver::Plan plan = solver_.plan(points);
  const fmm::Octree& tree = plan.tree;
  const fmm::GroupTree& groups = plan.groups;
  fmm::GroupData data(tree, groups, operators);
  const fmm::KernelContext context = fmm::KernelContext::of(tree, operators);
  const double tree_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  Session& s = *session_;
  s.clocks.reset();
  const std::vector<fmm::GroupTask>& tasks = groups.tasks();
  std::vector<TaskArg> args;  // outlives the tasks: they are waited for before it goes
  args.reserve(tasks.size());
  std::vector<fmm::M2LBatches> batches;  // likewise; reserved: args point into it
  const bool products = session_->m2l_products && session_->m2l_operators_handle != nullptr;
  if (products) batches.reserve(tasks.size());
  {
    Registration h(groups, data, s.results == STARPU_REDUX, &s.sum, &s.zero);
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      const fmm::GroupTask& task = tasks[t];
      const fmm::M2LBatches* plan = nullptr;
      if (products && task.kernel == Kernel::m2l) {
        batches.push_back(fmm::M2LBatches::of(task.work.data(), task.work.size(),
                                              s.m2l_operators.data(),
                                              static_cast<int>(operators.rank())));
        plan = &batches.back();
      }
      args.push_back(
          {&context, &s.clocks, task.kernel, task.interactions, plan, task.rows, &s.scratch});
      starpu_codelet* cl = &s.codelets[static_cast<std::size_t>(task.kernel)];
      const int priority = s.priority(task.kernel);
      void* arg = &args.back();
      const std::vector<starpu_data_handle_t> buffers =
          task_buffers(groups, t, h, s.m2l_operators_handle, s.tables_handle);
      starpu_task* submitted = starpu_task_create();
      submitted->cl = cl;
      for (std::size_t i = 0; i < buffers.size(); ++i) submitted->handles[i] = buffers[i];
      submitted->priority = priority;
      submitted->cl_arg = arg;
      submitted->cl_arg_size = sizeof(TaskArg);
      submitted->cl_arg_free = 0;
      const int ret = starpu_task_submit(submitted);
      if (ret != 0) {
        starpu_task_wait_for_all();  // the tasks already submitted use `args` and `h`
        check(ret, "starpu_task_insert");
      }
    }
    check(starpu_task_wait_for_all(), "starpu_task_wait_for_all");
  }  // unregistration: merges the reductions' copies into the results

  times = {};
  times.tree = tree_seconds;
  for (int k = 0; k < fmm::kernel_count; ++k) {
    const double seconds = 1e-9 * static_cast<double>(s.clocks.nanoseconds[k].load());
    times.add(fmm::pass_of(static_cast<Kernel>(k)), seconds);
    last_tasks_[static_cast<std::size_t>(k)] = {static_cast<long>(s.clocks.tasks[k].load()),
                                                seconds};
  }
  data.results_in_input_order(tree, into);
}

}  // namespace bench
