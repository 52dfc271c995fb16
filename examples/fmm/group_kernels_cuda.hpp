// The FMM's kernels on the GPU (group_kernels_cuda.cu), launched on the stream of the GPU
// worker's context, on device copies of the group arrays and work lists in the layouts of
// group_kernels.hpp. Declared without any CUDA header, so that the CUDA bodies in
// task_program.cpp compile in every build; the .cu file, which defines them, is compiled only
// with the CUDA backend (without it Versa drops those bodies, and nothing refers to these).
#pragma once

#include <cstddef>
#include <cstdint>

#include "versa/cuda_fwd.hpp"

namespace fmm::cuda {

// P2P on the entries of a p2p_inner (inner: a and b are one group) or p2p_pair work list of
// `work_size` values: each leaf pair's points receive the other leaf's potential and field
// (pairs at zero distance left out), as fmm::p2p_inner and fmm::p2p_pair do. Throws
// std::runtime_error when the launch fails.
void p2p(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* points_a, std::size_t count_a, const double* points_b, std::size_t count_b,
         double* results_a, double* results_b, bool inner);

// M2L on the entries of an m2l work list of `work_size` values (sorted by offset, as
// GroupTree makes them): targets[cell] += C_d sources[cell'] / width for each entry (d, cell,
// cell'), as fmm::m2l does, with `operators` the C_d of ChebyshevInterpolation::m2l_operators(),
// `rank` values per compressed expansion, and width the cells' (root_width / 2^level, the
// level being the work list's header). Throws std::runtime_error when the launch fails.
void m2l(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* operators, std::size_t rank, const double* sources, double* targets,
         double root_width);

}  // namespace fmm::cuda
