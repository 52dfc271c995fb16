// The FMM's device kernels (group_kernels_device.hpp) on the emulated device: the kernels the
// GPU runs, with the GPU's launch shapes, each block's threads run in turn between barriers
// (cuda_on_cpu.hpp), and the products that cuBLAS computes there computed by OpenBLAS with the
// same arguments; on host memory, in the layouts of group_kernels.hpp, with the arguments of
// the CUDA versions (group_kernels_cuda.hpp) less the GPU's context. The task types' .emulated
// bodies call them (task_flow.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel_steps.hpp"
#include "m2l_batches.hpp"

namespace fmm::emulated {

// P2P as cuda::p2p runs it on a GPU of `multiprocessors` SMs (how many blocks its launch wants:
// steps::p2p_source_parts). The default, a small device, has the tasks of fewer than 8 rows cut
// their rows' sources into parts, as tasks of fewer than 4 rows per SM do on a GPU.
void p2p(const steps::NearFieldRows& rows, const std::int32_t* work, const double* points_a,
         std::size_t count_a, const double* points_b, std::size_t count_b, double* results_a,
         double* results_b, bool inner, int multiprocessors = 2);
void m2l(const std::int32_t* work, std::size_t work_size, const double* operators, std::size_t rank,
         const double* sources, double* targets, double root_width);
// M2L as the batched products of `plan` (m2l_batches.hpp), as cuda::m2l_products runs them.
void m2l_products(const std::int32_t* work, const M2LBatches& plan, const double* operators,
                  std::size_t rank, const double* sources, double* targets, double root_width);
void p2m(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* points, std::size_t point_count,
         double* multipoles);
void m2m(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const double* child_multipoles, double* parent_multipoles);
void compress(const double* tables, int order, std::size_t rank, const double* multipoles,
              double* compressed, std::size_t cells);
void expand(const double* tables, int order, std::size_t rank, const double* compressed,
            double* locals, std::size_t cells);
void l2l(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const double* parent_locals, double* child_locals);
void p2l(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* points, std::size_t point_count,
         double* locals);
void m2p(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* multipoles, const double* points,
         std::size_t point_count, double* results);
void l2p(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* locals, const double* points,
         std::size_t point_count, double* results);

}  // namespace fmm::emulated
