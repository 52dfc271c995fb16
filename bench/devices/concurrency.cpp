// What the GPU makes of kernels on several streams, and what the calls a runtime makes between
// them cost that overlap, with no runtime at all. First each kernel alone on a 2048 tile, timed
// by events: the Cholesky's four (cuSOLVER's potrf, cuBLAS's trsm, syrk, gemm), and what a solve
// through the diagonal tile's inverse would take instead of trsm (cuSOLVER's trtri once per
// step, then cuBLAS's trmm per tile). Then the Cholesky's kernel mix (per round one trsm, four
// gemms and one syrk, as its 105 : 455 : 105), all queued at once: on one stream; dealt in turn
// to 2 and to 4 streams, each with its cuBLAS handle; the gemms on one stream and the other
// kernels on the other three; and on 4 streams with, between kernels, a timed event pair around
// each (what Versa records to time its tasks), one untimed event after each (what StarPU
// records), a cudaMalloc of a tile before every fourth (a runtime allocating tiles as they
// arrive), the same from a memory pool in stream order (Config::cuda_memory_pool), or a
// cudaFree; last the same mix with trmm in place of trsm (the panel through the inverse) on one
// stream and on 4. Each figure is the median wall time from the first launch to the device's
// idle, against the one stream's.
#include <cstdio>
#include <string>
#include <vector>

#include "common/harness.hpp"
#include "devices/gpu_config.hpp"
#include "devices/suites.hpp"
#if VERSA_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>
#endif

namespace bench {

#if VERSA_HAVE_CUDA
namespace {

constexpr int tile = 2048;
constexpr int streams = 4;
constexpr int rounds = 16;
constexpr std::size_t tile_bytes = std::size_t{tile} * tile * sizeof(double);

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("concurrency: ") + call + ": " +
                             cudaGetErrorString(status));
}
void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("concurrency: ") + call + " failed");
}
void check(cusolverStatus_t status, const char* call) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(std::string("concurrency: ") + call + " failed");
}

// The kernels timed alone.
enum class Kernel { potrf, trsm, syrk, gemm, trtri, trmm };

struct KernelRow {
  const char* name;
  Kernel kernel;
  double flops;  // per call, on a 2048 tile
};

// What is done between the kernels.
enum class Between { nothing, timed_events, untimed_events, malloc, pool, free };

struct Scenario {
  const char* name;
  int streams;
  Between between;
  // The gemms all on stream 0 and the other kernels on the others, instead of every kernel on
  // the next stream in turn: whether gemms, which each fill the GPU and its L2 cache, gain
  // anything from running beside each other, or only the slow kernels beside them.
  bool gemms_apart = false;
  // cuBLAS's trmm in place of trsm: the mix of a panel solved through the diagonal tile's
  // inverse, whose kernels may overlap differently.
  bool trmm_panel = false;
};

class Bench {
 public:
  Bench() {
    for (double*& buffer : inputs_)
      check(cudaMalloc(reinterpret_cast<void**>(&buffer), tile_bytes), "cudaMalloc");
    outputs_.resize(streams);
    for (double*& buffer : outputs_)
      check(cudaMalloc(reinterpret_cast<void**>(&buffer), tile_bytes), "cudaMalloc");
    // A well-conditioned lower triangle for trsm: the identity, scaled.
    std::vector<double> diagonal(static_cast<std::size_t>(tile) * tile, 0.0);
    for (int i = 0; i < tile; ++i) diagonal[static_cast<std::size_t>(i) * tile + i] = 2.0;
    check(cudaMemcpy(inputs_[2], diagonal.data(), tile_bytes, cudaMemcpyHostToDevice), "copy");
    // Not zeros, which could draw less power and so run at higher clocks than real data.
    const std::vector<double> values(static_cast<std::size_t>(tile) * tile, 0.5);
    for (double* buffer : {inputs_[0], inputs_[1]})
      check(cudaMemcpy(buffer, values.data(), tile_bytes, cudaMemcpyHostToDevice), "copy");
    for (double* buffer : outputs_)
      check(cudaMemcpy(buffer, values.data(), tile_bytes, cudaMemcpyHostToDevice), "copy");
    for (int s = 0; s < streams; ++s) {
      check(cudaStreamCreateWithFlags(&streams_[s], cudaStreamNonBlocking), "cudaStreamCreate");
      check(cublasCreate(&handles_[s]), "cublasCreate");
      check(cublasSetStream(handles_[s], streams_[s]), "cublasSetStream");
    }
    check(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cusolverDnCreate(&solver_), "cusolverDnCreate");
    check(cusolverDnSetStream(solver_, streams_[0]), "cusolverDnSetStream");
    check(cudaMalloc(reinterpret_cast<void**>(&scratch_), tile_bytes), "cudaMalloc");
    int potrf_work = 0;
    check(cusolverDnDpotrf_bufferSize(solver_, CUBLAS_FILL_MODE_LOWER, tile, scratch_, tile,
                                      &potrf_work),
          "cusolverDnDpotrf_bufferSize");
    std::size_t trtri_device = 0, trtri_host = 0;
    check(cusolverDnXtrtri_bufferSize(solver_, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, tile,
                                      CUDA_R_64F, scratch_, tile, &trtri_device, &trtri_host),
          "cusolverDnXtrtri_bufferSize");
    work_bytes_ = std::max(static_cast<std::size_t>(potrf_work) * sizeof(double), trtri_device);
    check(cudaMalloc(&work_, work_bytes_ + sizeof(int)), "cudaMalloc");
    host_work_.resize(std::max<std::size_t>(trtri_host, 1));
    cudaMemPoolProps properties{};
    properties.allocType = cudaMemAllocationTypePinned;
    properties.location.type = cudaMemLocationTypeDevice;
    check(cudaGetDevice(&properties.location.id), "cudaGetDevice");
    check(cudaMemPoolCreate(&pool_, &properties), "cudaMemPoolCreate");
  }
  ~Bench() {
    (void)cudaDeviceSynchronize();
    for (int s = 0; s < streams; ++s) {
      cublasDestroy(handles_[s]);
      cudaStreamDestroy(streams_[s]);
    }
    cudaStreamDestroy(side_);
    cudaMemPoolDestroy(pool_);
    cusolverDnDestroy(solver_);
    cudaFree(scratch_);
    cudaFree(work_);
    for (double* buffer : inputs_) cudaFree(buffer);
    for (double* buffer : outputs_) cudaFree(buffer);
  }

  // Milliseconds of one call of `kernel` on stream 0, timed by events; potrf and trtri work on a
  // fresh copy of the diagonal tile, copied before the first event.
  double alone(Kernel kernel) {
    cudaStream_t stream = streams_[0];
    cudaEvent_t start = nullptr, end = nullptr;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&end), "cudaEventCreate");
    if (kernel == Kernel::potrf || kernel == Kernel::trtri)
      check(cudaMemcpyAsync(scratch_, inputs_[2], tile_bytes, cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync");
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    auto* info = reinterpret_cast<int*>(static_cast<char*>(work_) + work_bytes_);
    switch (kernel) {
      case Kernel::potrf:
        check(cusolverDnDpotrf(solver_, CUBLAS_FILL_MODE_LOWER, tile, scratch_, tile,
                               static_cast<double*>(work_),
                               static_cast<int>(work_bytes_ / sizeof(double)), info),
              "cusolverDnDpotrf");
        break;
      case Kernel::trtri:
        check(cusolverDnXtrtri(solver_, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, tile,
                               CUDA_R_64F, scratch_, tile, work_, work_bytes_, host_work_.data(),
                               host_work_.size(), info),
              "cusolverDnXtrtri");
        break;
      default:
        launch(kernel == Kernel::syrk   ? 5
               : kernel == Kernel::gemm ? 1
                                        : 0,
               0, kernel == Kernel::trmm);
    }
    check(cudaEventRecord(end, stream), "cudaEventRecord");
    check(cudaEventSynchronize(end), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, end), "cudaEventElapsedTime");
    cudaEventDestroy(start);
    cudaEventDestroy(end);
    return ms;
  }

  // Seconds from the first launch to the device's idle.
  double run(const Scenario& scenario) {
    const int kernels = rounds * 6;
    std::vector<void*> allocated;
    std::vector<void*> to_free;
    if (scenario.between == Between::free)
      for (int k = 0; k < kernels / 4; ++k) {
        void* buffer = nullptr;
        check(cudaMalloc(&buffer, tile_bytes), "cudaMalloc");
        to_free.push_back(buffer);
      }
    std::vector<cudaEvent_t> events;
    const unsigned flags =
        scenario.between == Between::untimed_events ? cudaEventDisableTiming : cudaEventDefault;
    const int per_kernel = scenario.between == Between::timed_events     ? 2
                           : scenario.between == Between::untimed_events ? 1
                                                                         : 0;
    events.resize(static_cast<std::size_t>(kernels * per_kernel));
    for (cudaEvent_t& event : events) check(cudaEventCreateWithFlags(&event, flags), "event");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

    const auto start = Clock::now();
    for (int k = 0; k < kernels; ++k) {
      const int kind = k % 6;
      const bool gemm = kind >= 1 && kind <= 4;
      const int s = !scenario.gemms_apart ? k % scenario.streams
                    : gemm                ? 0
                                          : 1 + (k / 6 + (kind == 5)) % (scenario.streams - 1);
      if (k % 4 == 0) {
        void* buffer = nullptr;
        switch (scenario.between) {
          case Between::malloc:
            check(cudaMalloc(&buffer, tile_bytes), "cudaMalloc");
            allocated.push_back(buffer);
            break;
          case Between::pool:
            check(cudaMallocFromPoolAsync(&buffer, tile_bytes, pool_, side_), "pool");
            check(cudaStreamSynchronize(side_), "cudaStreamSynchronize");
            allocated.push_back(buffer);
            break;
          case Between::free:
            check(cudaFree(to_free.back()), "cudaFree");
            to_free.pop_back();
            break;
          default:
            break;
        }
      }
      if (scenario.between == Between::timed_events)
        check(cudaEventRecord(events[static_cast<std::size_t>(2 * k)], streams_[s]), "record");
      launch(kind, s, scenario.trmm_panel);
      if (per_kernel > 0)
        check(cudaEventRecord(events[static_cast<std::size_t>(per_kernel * k + per_kernel - 1)],
                              streams_[s]),
              "record");
    }
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const double seconds = seconds_since(start);

    for (cudaEvent_t event : events) cudaEventDestroy(event);
    for (void* buffer : allocated)
      check(scenario.between == Between::pool ? cudaFreeAsync(buffer, side_) : cudaFree(buffer),
            "free");
    for (void* buffer : to_free) check(cudaFree(buffer), "cudaFree");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return seconds;
  }

 private:
  // Kernel `kind` of a round (0: trsm, or trmm with `trmm_panel`; 1-4: gemm, 5: syrk) on stream
  // `s`, into its own tile.
  void launch(int kind, int s, bool trmm_panel) {
    const double one = 1.0, minus_one = -1.0;
    double* out = outputs_[static_cast<std::size_t>(s)];
    if (kind == 0 && trmm_panel) {  // in place, as cuBLAS allows when its B and C are one matrix
      check(cublasDtrmm(handles_[s], CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                        CUBLAS_DIAG_NON_UNIT, tile, tile, &one, inputs_[2], tile, out, tile, out,
                        tile),
            "cublasDtrmm");
    } else if (kind == 0) {
      check(cublasDtrsm(handles_[s], CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                        CUBLAS_DIAG_NON_UNIT, tile, tile, &one, inputs_[2], tile, out, tile),
            "cublasDtrsm");
    } else if (kind == 5) {
      check(cublasDsyrk(handles_[s], CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, tile, tile, &minus_one,
                        inputs_[0], tile, &one, out, tile),
            "cublasDsyrk");
    } else {
      check(cublasDgemm(handles_[s], CUBLAS_OP_N, CUBLAS_OP_T, tile, tile, tile, &minus_one,
                        inputs_[0], tile, inputs_[1], tile, &one, out, tile),
            "cublasDgemm");
    }
  }

  double* inputs_[3] = {};
  std::vector<double*> outputs_;
  cudaStream_t streams_[streams] = {};
  cublasHandle_t handles_[streams] = {};
  cudaStream_t side_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
  cusolverDnHandle_t solver_ = nullptr;
  double* scratch_ = nullptr;  // potrf's and trtri's tile
  void* work_ = nullptr;       // their workspace, then their info word
  std::size_t work_bytes_ = 0;
  std::vector<char> host_work_;
};

}  // namespace
#endif

void suite_concurrency(const DeviceOptions& options) {
  std::printf("\n== concurrency: the Cholesky's kernel mix on 2048 tiles, no runtime ==\n");
#if VERSA_HAVE_CUDA
  if (!cuda_gpu_present()) return;
  const Scenario scenarios[] = {
      {"1 stream", 1, Between::nothing},
      {"2 streams", 2, Between::nothing},
      {"4 streams", streams, Between::nothing},
      {"4 streams, gemms on one", streams, Between::nothing, true},
      {"4 streams, timed event pairs", streams, Between::timed_events},
      {"4 streams, untimed events", streams, Between::untimed_events},
      {"4 streams, cudaMalloc", streams, Between::malloc},
      {"4 streams, pool allocations", streams, Between::pool},
      {"4 streams, cudaFree", streams, Between::free},
      {"1 stream, trmm for trsm", 1, Between::nothing, false, true},
      {"4 streams, trmm for trsm", streams, Between::nothing, false, true},
  };
  Bench bench;
  const double t = tile;
  const KernelRow kernels[] = {
      {"potrf", Kernel::potrf, t * t * t / 3}, {"trsm", Kernel::trsm, t * t * t},
      {"syrk", Kernel::syrk, t * t * t},       {"gemm", Kernel::gemm, 2 * t * t * t},
      {"trtri", Kernel::trtri, t * t * t / 3}, {"trmm", Kernel::trmm, t * t * t}};
  for (const KernelRow& row : kernels) (void)bench.alone(row.kernel);  // loads the kernels
  std::printf("each kernel alone on a 2048 tile, median of %d calls\n", 4 * options.reps);
  std::printf("%-8s %10s %10s\n", "kernel", "ms", "TFLOP/s");
  for (const KernelRow& row : kernels) {
    std::vector<double> ms;
    for (int r = 0; r < 4 * options.reps; ++r) ms.push_back(bench.alone(row.kernel));
    const double call = median(ms);
    std::printf("%-8s %10.3f %10.1f\n", row.name, call, row.flops / (call * 1e-3) / 1e12);
    print_result("concurrency", "cuda", std::string("kernel=") + row.name, "ms_per_call", call,
                 "ms");
  }
  (void)bench.run(scenarios[1]);  // cuBLAS's first calls load its kernels
  std::vector<std::vector<double>> seconds(std::size(scenarios));
  // The scenarios take turns, so that a slow spell of the machine spreads over all of them.
  for (int r = 0; r < options.reps; ++r)
    for (std::size_t i = 0; i < std::size(scenarios); ++i)
      seconds[i].push_back(bench.run(scenarios[i]));
  const double serial = median(seconds[0]);
  std::printf("%d rounds of trsm + 4 gemm + syrk, median of %d\n", rounds, options.reps);
  std::printf("%-32s %10s %12s\n", "scenario", "ms", "/ 1 stream");
  for (std::size_t i = 0; i < std::size(scenarios); ++i) {
    const double s = median(seconds[i]);
    std::printf("%-32s %10.2f %12.3f\n", scenarios[i].name, s * 1e3, s / serial);
    std::string param = scenarios[i].name;
    std::replace(param.begin(), param.end(), ' ', '_');
    std::erase(param, ',');
    print_result("concurrency", "cuda", "scenario=" + param, "seconds", s, "s");
  }
#else
  (void)options;
  std::printf("(no CUDA backend in this build: this suite needs one)\n");
#endif
}

}  // namespace bench
