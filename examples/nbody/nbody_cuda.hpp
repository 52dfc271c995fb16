// The n-body kernels on the GPU (nbody_cuda.cu), launched on the stream of the GPU worker's
// context. Pointers are device memory in the block layout of nbody::System (x of every particle,
// then y, then z). Declared without any CUDA header, so that the CUDA bodies in nbody.cpp compile
// in every build; nbody_cuda.cu, which defines them, is compiled only with the CUDA backend
// (without it Versa drops those bodies, and nothing refers to these functions).
#pragma once

#include <cstddef>

#include "versa/cuda_fwd.hpp"

namespace nbody::cuda {

// Adds into `force` the forces that the `source_count` particles at `source` exert on the
// `target_count` particles at `target`. With `same_block`, target and source are one block and
// each particle skips itself. Throws std::runtime_error when the launch fails.
void add_forces(versa::CudaContext& gpu, const double* target, std::size_t target_count,
                const double* source, std::size_t source_count, double* force, bool same_block);

// nbody::move on `count` doubles of each array.
void move(versa::CudaContext& gpu, double* position, double* velocity, double* force,
          std::size_t count, double dt);

}  // namespace nbody::cuda
