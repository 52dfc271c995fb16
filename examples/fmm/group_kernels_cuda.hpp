// The FMM's kernels on the GPU (group_kernels_cuda.cu), launched on the stream of the GPU
// worker's context, on device copies of the group arrays and work lists in the layouts of
// group_kernels.hpp. Declared without any CUDA header, so that the CUDA bodies in
// task_program.cpp compile in every build; the .cu file, which defines them, is compiled only
// with the CUDA backend (without it Versa drops those bodies, and nothing refers to these).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel_steps.hpp"
#include "m2l_batches.hpp"
#include "versa/cuda_fwd.hpp"

namespace fmm::cuda {

// P2P on a p2p_inner (inner: a and b are one group) or p2p_pair work list, through its
// by-target view (group_tree.hpp) of `rows` (GroupTask::rows): each leaf pair's points receive
// the other leaf's potential and field (pairs at zero distance left out), as fmm::p2p_inner and
// fmm::p2p_pair do. Throws std::runtime_error when the launch fails.
void p2p(versa::CudaContext& gpu, const steps::NearFieldRows& rows, const std::int32_t* work,
         const double* points_a, std::size_t count_a, const double* points_b, std::size_t count_b,
         double* results_a, double* results_b, bool inner);

// M2L on the entries of an m2l work list of `work_size` values (sorted by offset, as
// GroupTree makes them): targets[cell] += C_d sources[cell'] / width for each entry (d, cell,
// cell'), as fmm::m2l does, with `operators` the C_d of ChebyshevInterpolation::m2l_operators()
// (whole or truncated, CompressedM2L::device_operators), `rank` values per compressed
// expansion, and width the cells' (root_width / 2^level, the level being the work list's
// header). Throws std::runtime_error when the launch fails.
void m2l(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* operators, std::size_t rank, const double* sources, double* targets,
         double root_width);

// M2L as the batched products of `plan` (m2l_batches.hpp, made from the same work list on the
// host): the sources gathered, cuBLAS grouped batched GEMMs per pass, the contributions added
// into their targets; arguments and result as m2l's.
void m2l_products(versa::CudaContext& gpu, const std::int32_t* work, const M2LBatches& plan,
                  const double* operators, std::size_t rank, const double* sources, double* targets,
                  double root_width);

// The upward and downward passes, P2L and M2P, as fmm::p2m, m2m, compress, expand, l2l, l2p,
// p2l and m2p do
// (group_kernels.hpp), on device arrays in the same layouts: `tables` is the device copy of
// ChebyshevInterpolation::device_tables() of `order`, `rank` the values per compressed
// expansion, `cube` the root cube; a point group's arrays hold `points` points. The work lists'
// headers (the cell level) are read on the device. Each kernel does the steps of
// kernel_steps.hpp (group_kernels_device.hpp, which the emulated device runs too). Throw
// std::runtime_error when a launch fails.
void p2m(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const steps::RootCube& cube, const double* points,
         std::size_t point_count, double* multipoles);
void m2m(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const double* child_multipoles,
         double* parent_multipoles);
void compress(versa::CudaContext& gpu, const double* tables, int order, std::size_t rank,
              const double* multipoles, double* compressed, std::size_t cells);
void expand(versa::CudaContext& gpu, const double* tables, int order, std::size_t rank,
            const double* compressed, double* locals, std::size_t cells);
void l2l(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const double* parent_locals, double* child_locals);
void p2l(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const steps::RootCube& cube, const double* points,
         std::size_t point_count, double* locals);
void m2p(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const steps::RootCube& cube, const double* multipoles,
         const double* points, std::size_t point_count, double* results);
void l2p(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const steps::RootCube& cube, const double* locals,
         const double* points, std::size_t point_count, double* results);

}  // namespace fmm::cuda
