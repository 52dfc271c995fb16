// What the GPU makes of kernels on several streams, and what the calls a runtime makes between
// them cost that overlap, with no runtime at all. First each kernel alone on a 2048 tile, timed
// by events: the Cholesky's four (cuSOLVER's potrf, cuBLAS's trsm, syrk, gemm), and what a solve
// through the diagonal tile's inverse would take instead of trsm (cuSOLVER's trtri once per
// step, then cuBLAS's trmm per tile, in place as the Cholesky runs it and out of place). Then the
// Cholesky's kernel mix (per round one trsm, four gemms and one syrk, as its 105 : 455 : 105), all
// queued at once: on one stream; dealt in turn to 2 and to 4 streams, each with its cuBLAS handle;
// the gemms on one stream and the other kernels on the other three; and on 4 streams with, between
// kernels, a timed event pair around each (what Versa records to time its tasks), one untimed event
// after each (what StarPU records), a cudaMalloc of a tile before every fourth (a runtime
// allocating tiles as they arrive), the same from a memory pool in stream order
// (Config::cuda_memory_pool), or a cudaFree; the same mix with trmm in place of trsm (the panel
// through the inverse) on one stream and on 4; last with the GPU's SMs split in two green contexts
// (Config::cuda_panel_sms: SmPartition), the gemms on one stream of the larger share and the other
// kernels on three of the smaller, of 16, 32 and 48 SMs, where trsm and gemm are also timed alone.
// Each figure is the median wall time from the first launch to the device's idle, against the one
// stream's.
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
#include <map>
#include <memory>
#include <stdexcept>

#include "cuda/sm_partition.hpp"  // the runtime's own, so that both split the SMs alike
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
// trmm: in place, as the Cholesky runs it; trmm_apart: out of place (cuBLAS's own form, which
// may run faster), into another tile.
enum class Kernel { potrf, trsm, syrk, gemm, trtri, trmm, trmm_apart };

struct KernelRow {
  const char* name;
  Kernel kernel;
  double flops;  // per call, on a 2048 tile
};

// What is done between the kernels.
enum class Between { nothing, timed_events, untimed_events, malloc, pool, free };

struct Scenario {
  std::string name;
  int streams;
  Between between;
  // The gemms all on stream 0 and the other kernels on the others, instead of every kernel on
  // the next stream in turn: whether gemms, which each fill the GPU and its L2 cache, gain
  // anything from running beside each other, or only the slow kernels beside them.
  bool gemms_apart = false;
  // cuBLAS's trmm in place of trsm: the mix of a panel solved through the diagonal tile's
  // inverse, whose kernels may overlap differently.
  bool trmm_panel = false;
  // With gemms_apart: the other kernels' streams on this many SMs, the gemms' on the rest.
  int panel_sms = 0;
};

// Kernel streams, each with its cuBLAS handle: on every SM, or split between two green contexts,
// stream 0 on the larger share and the others on the smaller.
class StreamSet {
 public:
  explicit StreamSet(int panel_sms = 0) {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    if (panel_sms > 0) partition_ = std::make_unique<versa::detail::SmPartition>(device, panel_sms);
    for (int s = 0; s < streams; ++s) {
      if (partition_)
        streams_[s] = partition_->create_stream(s > 0, 0);
      else
        check(cudaStreamCreateWithFlags(&streams_[s], cudaStreamNonBlocking), "cudaStreamCreate");
      check(cublasCreate(&handles_[s]), "cublasCreate");
      check(cublasSetStream(handles_[s], streams_[s]), "cublasSetStream");
      // As the runtime's streams: cuBLAS told the SMs its stream has.
      if (partition_)
        check(cublasSetSmCountTarget(handles_[s],
                                     s > 0 ? partition_->panel_sms() : partition_->other_sms()),
              "cublasSetSmCountTarget");
    }
  }
  ~StreamSet() {
    synchronize();
    for (int s = 0; s < streams; ++s) {
      cublasDestroy(handles_[s]);
      cudaStreamDestroy(streams_[s]);
    }
  }
  StreamSet(const StreamSet&) = delete;
  StreamSet& operator=(const StreamSet&) = delete;

  cudaStream_t stream(int s) const { return streams_[s]; }
  cublasHandle_t handle(int s) const { return handles_[s]; }
  // The SMs of the smaller share and of the larger (0 and 0 without a partition).
  int panel_sms() const { return partition_ ? partition_->panel_sms() : 0; }
  int other_sms() const { return partition_ ? partition_->other_sms() : 0; }
  // Each stream, one by one: the streams of this set, not the whole GPU.
  void synchronize() const {
    for (cudaStream_t stream : streams_) (void)cudaStreamSynchronize(stream);
  }

 private:
  std::unique_ptr<versa::detail::SmPartition> partition_;  // outlives the streams
  cudaStream_t streams_[streams] = {};
  cublasHandle_t handles_[streams] = {};
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
    check(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cusolverDnCreate(&solver_), "cusolverDnCreate");
    check(cusolverDnSetStream(solver_, shared_.stream(0)), "cusolverDnSetStream");
    check(cudaMalloc(reinterpret_cast<void**>(&scratch_), tile_bytes), "cudaMalloc");
    int potrf_work = 0;
    check(cusolverDnDpotrf_bufferSize(solver_, CUBLAS_FILL_MODE_LOWER, tile, scratch_, tile,
                                      &potrf_work),
          "cusolverDnDpotrf_bufferSize");
    std::size_t trtri_device = 0, trtri_host = 0;
    check(cusolverDnXtrtri_bufferSize(solver_, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, tile,
                                      CUDA_R_64F, scratch_, tile, &trtri_device, &trtri_host),
          "cusolverDnXtrtri_bufferSize");
    // Rounded up so that the info word after the workspace is aligned.
    work_bytes_ =
        (std::max(static_cast<std::size_t>(potrf_work) * sizeof(double), trtri_device) + 255) /
        256 * 256;
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
    cudaStreamDestroy(side_);
    cudaMemPoolDestroy(pool_);
    cusolverDnDestroy(solver_);
    cudaFree(scratch_);
    cudaFree(work_);
    for (double* buffer : inputs_) cudaFree(buffer);
    for (double* buffer : outputs_) cudaFree(buffer);
  }

  // The streams split at `panel_sms` SMs, made at the first call.
  const StreamSet& split(int panel_sms) {
    std::unique_ptr<StreamSet>& set = split_[panel_sms];
    if (!set) set = std::make_unique<StreamSet>(panel_sms);
    return *set;
  }

  // Milliseconds of one call of `kernel` on stream `s` of `set` (by default stream 0 on every
  // SM), timed by events; potrf and trtri work on a fresh copy of the diagonal tile, copied
  // before the first event.
  double alone(Kernel kernel, const StreamSet* set = nullptr, int s = 0) {
    if (set == nullptr) set = &shared_;
    cudaStream_t stream = set->stream(s);
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
      case Kernel::trmm_apart: {
        const double one = 1.0;
        check(cublasDtrmm(set->handle(s), CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                          CUBLAS_DIAG_NON_UNIT, tile, tile, &one, inputs_[2], tile, inputs_[0],
                          tile, outputs_[static_cast<std::size_t>(s)], tile),
              "cublasDtrmm");
        break;
      }
      default:
        launch(*set,
               kernel == Kernel::syrk   ? 5
               : kernel == Kernel::gemm ? 1
                                        : 0,
               s, kernel == Kernel::trmm);
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
    const StreamSet& set = scenario.panel_sms > 0 ? split(scenario.panel_sms) : shared_;
    set.synchronize();

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
        check(cudaEventRecord(events[static_cast<std::size_t>(2 * k)], set.stream(s)), "record");
      launch(set, kind, s, scenario.trmm_panel);
      if (per_kernel > 0)
        check(cudaEventRecord(events[static_cast<std::size_t>(per_kernel * k + per_kernel - 1)],
                              set.stream(s)),
              "record");
    }
    set.synchronize();
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
  // `s` of `set`, into its own tile.
  void launch(const StreamSet& set, int kind, int s, bool trmm_panel) {
    const double one = 1.0, minus_one = -1.0;
    double* out = outputs_[static_cast<std::size_t>(s)];
    cublasHandle_t handle = set.handle(s);
    if (kind == 0 && trmm_panel) {  // in place, as cuBLAS allows when its B and C are one matrix
      check(cublasDtrmm(handle, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                        CUBLAS_DIAG_NON_UNIT, tile, tile, &one, inputs_[2], tile, out, tile, out,
                        tile),
            "cublasDtrmm");
    } else if (kind == 0) {
      check(cublasDtrsm(handle, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                        CUBLAS_DIAG_NON_UNIT, tile, tile, &one, inputs_[2], tile, out, tile),
            "cublasDtrsm");
    } else if (kind == 5) {
      check(cublasDsyrk(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, tile, tile, &minus_one,
                        inputs_[0], tile, &one, out, tile),
            "cublasDsyrk");
    } else {
      check(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, tile, tile, tile, &minus_one, inputs_[0],
                        tile, inputs_[1], tile, &one, out, tile),
            "cublasDgemm");
    }
  }

  double* inputs_[3] = {};
  std::vector<double*> outputs_;
  StreamSet shared_;
  std::map<int, std::unique_ptr<StreamSet>> split_;
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
  std::vector<Scenario> scenarios = {
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
  std::vector<int> splits;
  for (const int panel_sms : {16, 32, 48}) {
    try {
      (void)bench.split(panel_sms);
      splits.push_back(panel_sms);
    } catch (const std::exception& failure) {
      std::printf("(no split at %d SMs: %s)\n", panel_sms, failure.what());
    }
  }
  const double t = tile;
  const KernelRow kernels[] = {{"potrf", Kernel::potrf, t * t * t / 3},
                               {"trsm", Kernel::trsm, t * t * t},
                               {"syrk", Kernel::syrk, t * t * t},
                               {"gemm", Kernel::gemm, 2 * t * t * t},
                               {"trtri", Kernel::trtri, t * t * t / 3},
                               {"trmm", Kernel::trmm, t * t * t},
                               {"trmm_apart", Kernel::trmm_apart, t * t * t}};
  for (const KernelRow& row : kernels) (void)bench.alone(row.kernel);  // loads the kernels
  std::printf("each kernel alone on a 2048 tile, median of %d calls\n", 4 * options.reps);
  std::printf("%-10s %10s %10s\n", "kernel", "ms", "TFLOP/s");
  for (const KernelRow& row : kernels) {
    std::vector<double> ms;
    for (int r = 0; r < 4 * options.reps; ++r) ms.push_back(bench.alone(row.kernel));
    const double call = median(ms);
    std::printf("%-10s %10.3f %10.1f\n", row.name, call, row.flops / (call * 1e-3) / 1e12);
    print_result("concurrency", "cuda", std::string("kernel=") + row.name, "ms_per_call", call,
                 "ms");
  }
  // trsm on the smaller share of the SMs, gemm on the larger, each alone. A split whose kernels
  // fail (green contexts have never run here before) is left out of the scenarios below rather
  // than ending the suite before its main table.
  std::printf("trsm and gemm alone on a share of the SMs, median of %d calls\n", 4 * options.reps);
  std::printf("%-8s %6s %10s %10s\n", "kernel", "SMs", "ms", "TFLOP/s");
  for (const int panel_sms : splits) {
    try {
      const StreamSet& set = bench.split(panel_sms);
      for (const KernelRow& row : {kernels[1], kernels[3]}) {
        const int s = row.kernel == Kernel::trsm ? 1 : 0;
        (void)bench.alone(row.kernel, &set, s);
        std::vector<double> ms;
        for (int r = 0; r < 4 * options.reps; ++r) ms.push_back(bench.alone(row.kernel, &set, s));
        const double call = median(ms);
        const int sms = s == 1 ? set.panel_sms() : set.other_sms();
        std::printf("%-8s %6d %10.3f %10.1f\n", row.name, sms, call,
                    row.flops / (call * 1e-3) / 1e12);
        print_result("concurrency", "cuda",
                     std::string("kernel=") + row.name + ",sms=" + std::to_string(sms),
                     "ms_per_call", call, "ms");
      }
      scenarios.push_back({"4 streams, gemms on one, " + std::to_string(panel_sms) + " SMs",
                           streams, Between::nothing, true, false, panel_sms});
    } catch (const std::exception& failure) {
      std::printf("(the split at %d SMs failed: %s)\n", panel_sms, failure.what());
    }
  }
  (void)bench.run(scenarios[1]);  // cuBLAS's first calls load its kernels
  std::vector<std::vector<double>> seconds(scenarios.size());
  std::vector<std::string> failures(scenarios.size());  // of the split scenarios, which may fail
  // The scenarios take turns, so that a slow spell of the machine spreads over all of them.
  for (int r = 0; r < options.reps; ++r)
    for (std::size_t i = 0; i < scenarios.size(); ++i) {
      if (!failures[i].empty()) continue;
      try {
        seconds[i].push_back(bench.run(scenarios[i]));
      } catch (const std::exception& failure) {
        if (scenarios[i].panel_sms == 0) throw;
        failures[i] = failure.what();
      }
    }
  const double serial = median(seconds[0]);
  std::printf("%d rounds of trsm + 4 gemm + syrk, median of %d\n", rounds, options.reps);
  std::printf("%-32s %10s %12s\n", "scenario", "ms", "/ 1 stream");
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    if (!failures[i].empty()) {
      std::printf("%-32s (failed: %s)\n", scenarios[i].name.c_str(), failures[i].c_str());
      continue;
    }
    const double s = median(seconds[i]);
    std::printf("%-32s %10.2f %12.3f\n", scenarios[i].name.c_str(), s * 1e3, s / serial);
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
