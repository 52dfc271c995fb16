#include "devices/cuda_spin.hpp"

namespace bench {

namespace {
// The GPU's global timer counts nanoseconds of wall time, whatever the SM clock: an idle GPU
// runs a one-thread kernel at a fraction of its rated clock, so a spin counted in clock64()
// cycles took several times its nominal time there.
__device__ unsigned long long global_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

__global__ void spin(unsigned long long nanoseconds) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < nanoseconds) {
  }
}
}  // namespace

void spin_on_stream(cudaStream_t stream, double seconds) {
  spin<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(seconds * 1e9));
}

}  // namespace bench
