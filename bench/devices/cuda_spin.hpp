// A CUDA kernel that occupies the GPU for a given time (bench/devices/cuda_spin.cu), the GPU
// counterpart of busy_wait_us. Only declared when the CUDA backend is built.
#pragma once

#if VERSA_HAVE_CUDA
#include <cuda_runtime_api.h>

namespace bench {
// Queues on `stream` one single-thread kernel that spins for `seconds` of GPU clock.
void spin_on_stream(cudaStream_t stream, double seconds);
}  // namespace bench
#endif
