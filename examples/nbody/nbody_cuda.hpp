// The n-body kernels on the GPU (nbody_cuda.cu), launched on the GPU worker's stream. Pointers
// are device memory in the block layout of nbody::System (x of every particle, then y, then z).
// Only declared when the CUDA backend is built.
#pragma once

#if VERSA_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>

namespace nbody::cuda {

// Adds into `force` the forces that the `source_count` particles at `source` exert on the
// `target_count` particles at `target`. With `same_block`, target and source are one block and
// each particle skips itself. Throws std::runtime_error when the launch fails.
void add_forces(cudaStream_t stream, const double* target, std::size_t target_count,
                const double* source, std::size_t source_count, double* force, bool same_block);

// nbody::move on `count` doubles of each array.
void move(cudaStream_t stream, double* position, double* velocity, double* force, std::size_t count,
          double dt);

}  // namespace nbody::cuda
#endif
