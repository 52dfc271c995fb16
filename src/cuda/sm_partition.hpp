// A GPU's streaming multiprocessors split in two green contexts (CUDA 12.5+): a small partition
// for the high-priority streams, where a tiled factorisation's panel runs, and the rest for the
// other kernel streams (Config::cuda_panel_sms). Priorities only order the thread blocks waiting
// for room; a panel's kernels (cuSOLVER's potrf, cuBLAS's trsm: chains of small kernels, each
// spread over every SM) still share every SM with the gemms beside them and run at a fraction of
// their speed. On SMs of their own they run beside the gemms without slowing them, and the gemms
// lose only the SMs they give up.
//
// The green-context calls belong to the driver API, fetched through the runtime
// (cudaGetDriverEntryPointByVersion), so that nothing links against libcuda.so: a machine
// without a GPU still loads the library.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <memory>

namespace versa::detail {

class SmPartition {
 public:
  // Splits GPU `ordinal`'s SMs into a partition of at least `panel_sms` SMs (rounded up to the
  // GPU's granularity: 8 on compute capability 9.0) and the rest. Throws CudaError when the
  // driver has no green contexts, or when the GPU cannot give that many and keep some.
  SmPartition(int ordinal, int panel_sms);
  // Destroys both green contexts: every stream created from them must be destroyed before.
  ~SmPartition();
  SmPartition(const SmPartition&) = delete;
  SmPartition& operator=(const SmPartition&) = delete;

  // A new non-blocking stream of `priority` on the panel's SMs or on the others'; the caller
  // owns it (cudaStreamDestroy). Throws CudaError when it cannot be created.
  cudaStream_t create_stream(bool panel, int priority) const;

  int panel_sms() const { return panel_sms_; }
  int other_sms() const { return other_sms_; }

 private:
  struct DriverCalls;
  // Throws CudaError when an event of the runtime cannot be recorded on a stream of `context`.
  void check_events_on(CUgreenCtx context) const;
  std::unique_ptr<const DriverCalls> calls_;
  CUgreenCtx panel_ = nullptr;
  CUgreenCtx others_ = nullptr;
  int panel_sms_ = 0;
  int other_sms_ = 0;
};

}  // namespace versa::detail
