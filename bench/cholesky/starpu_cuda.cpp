// The tiled Cholesky's StarPU CUDA codelets: the example's GPU tile kernels
// (examples/cholesky/cuda_kernels.hpp, the ones Versa's CUDA bodies call) run on a StarPU CUDA
// worker through a versa::CudaContext made of that worker's StarPU stream and handles, so both
// systems run the very same cuBLAS / cuSOLVER calls. Built only when StarPU and Versa both have
// CUDA; starpu_no_cuda.cpp stands in otherwise.
#include <starpu.h>
#include <starpu_cublas_v2.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

#include "cholesky/starpu_kernels.hpp"
#include "cuda_kernels.hpp"
#include "versa/cuda.hpp"

namespace bench::starpu_cholesky {
namespace {

// What StarPU does not give a CUDA worker: a cuSOLVER handle on its stream and device scratch
// memory for cuSOLVER's workspace. Entry w belongs to worker w: made and freed on that worker's
// thread (starpu_execute_on_each_worker) and otherwise used only by the tasks it runs, one at a
// time, so no lock guards it.
struct WorkerLibraries {
  cusolverDnHandle_t cusolver = nullptr;
  void* workspace = nullptr;
  std::size_t capacity = 0;
};
std::array<WorkerLibraries, STARPU_NMAXWORKERS> worker_libraries;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "StarPU Cholesky CUDA worker: %s\n", what);
  std::abort();
}

// The calling CUDA worker's stream and handles, as the example's kernels take them.
class WorkerContext final : public versa::CudaContext {
 public:
  // `check_words` false: device words are not read (check_after does nothing).
  explicit WorkerContext(bool check_words = true)
      : worker_(starpu_worker_get_id_check()),
        libraries_(worker_libraries[worker_]),
        check_words_(check_words) {}

  cudaStream_t stream() override { return starpu_cuda_get_local_stream(); }
  cublasHandle_t cublas() override { return starpu_cublas_get_local_handle(); }
  cusolverDnHandle_t cusolver() override { return libraries_.cusolver; }
  int device() const override { return starpu_worker_get_devid(static_cast<int>(worker_)); }

  // StarPU checks nothing after a task: the word is read here, waiting for the stream, as
  // StarPU's own Cholesky example waits for its potrf.
  void check_after(const int* device_word, std::function<std::string(int)> check) override {
    if (!check_words_) return;
    int value = 0;
    if (cudaMemcpyAsync(&value, device_word, sizeof(int), cudaMemcpyDeviceToHost, stream()) !=
            cudaSuccess ||
        cudaStreamSynchronize(stream()) != cudaSuccess)
      throw std::runtime_error("reading a checked device word failed");
    if (std::string message = check(value); !message.empty()) throw std::runtime_error(message);
  }

  // The work queued before on the stream may still use the old workspace: it is freed once the
  // stream has drained. Tiles of one size need this once per worker.
  void* workspace(std::size_t bytes) override {
    if (bytes <= libraries_.capacity) return libraries_.workspace;
    if (libraries_.workspace != nullptr) {
      if (cudaStreamSynchronize(stream()) != cudaSuccess ||
          cudaFree(libraries_.workspace) != cudaSuccess)
        throw std::runtime_error("freeing the cuSOLVER workspace failed");
      libraries_.workspace = nullptr;
      libraries_.capacity = 0;
    }
    if (cudaMalloc(&libraries_.workspace, bytes) != cudaSuccess)
      throw std::runtime_error("allocating the cuSOLVER workspace failed");
    libraries_.capacity = bytes;
    return libraries_.workspace;
  }

 private:
  unsigned worker_;
  WorkerLibraries& libraries_;
  bool check_words_;
};

// A tile on the worker's GPU, as StarPU's matrix interface describes it (nx rows, column-major).
struct DeviceTile {
  double* data;
  int rows;
  int cols;
  int ld;
};

DeviceTile tile_of(void* buffer) {
  return {reinterpret_cast<double*>(STARPU_MATRIX_GET_PTR(buffer)),
          static_cast<int>(STARPU_MATRIX_GET_NX(buffer)),
          static_cast<int>(STARPU_MATRIX_GET_NY(buffer)),
          static_cast<int>(STARPU_MATRIX_GET_LD(buffer))};
}

// A kernel that throws on a GPU worker has met a broken device or library, not a result to
// report: StarPU cannot carry the exception back, so the process stops with its message.
template <class Kernel>
void run_or_abort(Kernel kernel) {
  try {
    kernel();
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

void start_worker(void*) {
  WorkerLibraries& libraries = worker_libraries[starpu_worker_get_id_check()];
  if (cusolverDnCreate(&libraries.cusolver) != CUSOLVER_STATUS_SUCCESS ||
      cusolverDnSetStream(libraries.cusolver, starpu_cuda_get_local_stream()) !=
          CUSOLVER_STATUS_SUCCESS)
    fail("creating the cuSOLVER handle failed");
}

void stop_worker(void*) {
  WorkerLibraries& libraries = worker_libraries[starpu_worker_get_id_check()];
  if (libraries.workspace != nullptr) cudaFree(libraries.workspace);
  if (libraries.cusolver != nullptr) cusolverDnDestroy(libraries.cusolver);
  libraries = {};
}

// A tile that is not positive definite is the factorisation's failure, as on the CPU: recorded
// for throw_if_failed. The kernel waits for cuSOLVER's info on the worker's stream.
void potrf_cuda_body(void* buffers[], void* cl_arg) {
  const DeviceTile akk = tile_of(buffers[0]);
  const auto* arg = static_cast<const PotrfArg*>(cl_arg);
  WorkerContext gpu;
  try {
    cholesky::cuda::potrf(gpu, akk.rows, akk.data, akk.ld);
  } catch (const std::exception& e) {
    arg->failure->record(arg->k, 0, e.what());
  }
}

void trsm_cuda_body(void* buffers[], void*) {
  const DeviceTile lkk = tile_of(buffers[0]);
  const DeviceTile amk = tile_of(buffers[1]);
  WorkerContext gpu;
  run_or_abort(
      [&] { cholesky::cuda::trsm(gpu, amk.rows, amk.cols, lkk.data, lkk.ld, amk.data, amk.ld); });
}

// cuSOLVER's info is not read: L(k,k) from a potrf that succeeded has a positive diagonal, so it
// is invertible, and reading the word would hold the worker until its stream drains, once per
// step, which StarPU's experts would not write (potrf's is read as StarPU's own Cholesky reads
// it). A library error is recorded as potrf's, so that a trtri failing on what a failed potrf
// left does not stop the process before potrf's failure is reported (Failure).
void trtri_cuda_body(void* buffers[], void* cl_arg) {
  const DeviceTile lkk = tile_of(buffers[0]);
  const DeviceTile inverse = tile_of(buffers[1]);
  const auto* arg = static_cast<const PotrfArg*>(cl_arg);
  WorkerContext gpu(/*check_words=*/false);
  try {
    cholesky::cuda::invert_lower(gpu, lkk.rows, lkk.data, lkk.ld, inverse.data, inverse.ld);
  } catch (const std::exception& e) {
    arg->failure->record(arg->k, 0, e.what(), "trtri");
  }
}

void trmm_cuda_body(void* buffers[], void*) {
  const DeviceTile inverse = tile_of(buffers[0]);
  const DeviceTile amk = tile_of(buffers[1]);
  WorkerContext gpu;
  run_or_abort([&] {
    cholesky::cuda::trmm(gpu, amk.rows, amk.cols, inverse.data, inverse.ld, amk.data, amk.ld);
  });
}

void syrk_cuda_body(void* buffers[], void*) {
  const DeviceTile amk = tile_of(buffers[0]);
  const DeviceTile amm = tile_of(buffers[1]);
  WorkerContext gpu;
  run_or_abort(
      [&] { cholesky::cuda::syrk(gpu, amm.rows, amk.cols, amk.data, amk.ld, amm.data, amm.ld); });
}

void gemm_cuda_body(void* buffers[], void*) {
  const DeviceTile amk = tile_of(buffers[0]);
  const DeviceTile ajk = tile_of(buffers[1]);
  const DeviceTile amj = tile_of(buffers[2]);
  WorkerContext gpu;
  run_or_abort([&] {
    cholesky::cuda::gemm(gpu, amj.rows, amj.cols, amk.cols, amk.data, amk.ld, ajk.data, ajk.ld,
                         amj.data, amj.ld);
  });
}

}  // namespace

bool cuda_codelets_built() { return true; }

void add_cuda_bodies(Codelets& cl) {
  // Each kernel only queues work on the worker's stream: StarPU waits for the stream itself.
  const auto add = [](starpu_codelet& codelet, starpu_cuda_func_t body) {
    codelet.where |= STARPU_CUDA;
    codelet.cuda_funcs[0] = body;
    codelet.cuda_flags[0] = STARPU_CUDA_ASYNC;
  };
  add(cl.potrf, potrf_cuda_body);
  add(cl.trsm, trsm_cuda_body);
  add(cl.trtri, trtri_cuda_body);
  add(cl.trmm, trmm_cuda_body);
  add(cl.syrk, syrk_cuda_body);
  add(cl.gemm, gemm_cuda_body);
}

void start_cuda_workers() {
  starpu_cublas_init();
  starpu_execute_on_each_worker(start_worker, nullptr, STARPU_CUDA);
}

void stop_cuda_workers() {
  starpu_execute_on_each_worker(stop_worker, nullptr, STARPU_CUDA);
  starpu_cublas_shutdown();
}

}  // namespace bench::starpu_cholesky
