#include "devices/cuda_spin.hpp"

namespace bench {

namespace {
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
}  // namespace

void spin_on_stream(cudaStream_t stream, double seconds) {
  int device = 0, khz = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device);
  spin<<<1, 1, 0, stream>>>(static_cast<long long>(seconds * khz * 1e3));
}

}  // namespace bench
