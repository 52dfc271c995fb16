#include "group_kernels_emulated.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "group_kernels_device.hpp"

namespace fmm::emulated {

namespace {

// The Device of group_kernels_device.hpp on the CPU: kernels through cuda_on_cpu, products
// through OpenBLAS with the arguments cuBLAS gets. One per call, as its workspace.
class Cpu {
 public:
  explicit Cpu(int multiprocessors = 1) : multiprocessors_(multiprocessors) {}

  template <class... Parameters, class... Arguments>
  void launch(const char*, void (*kernel)(Parameters...), unsigned blocks, unsigned threads,
              std::size_t shared_bytes, Arguments&&... arguments) {
    cuda_on_cpu::launch(kernel, blocks, threads, shared_bytes,
                        std::forward<Arguments>(arguments)...);
  }

  int multiprocessors() const { return multiprocessors_; }

  void* workspace(std::size_t bytes) {
    workspace_.resize((bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
    return workspace_.data();
  }

  void copy(double* to, const double* from, std::size_t count, const char*) {
    std::copy_n(from, count, to);
  }

  void gemm(const steps::GemmShape& g, const double* a, const double* b, double* c, const char*) {
    cblas_dgemm(CblasColMajor, g.transpose_a ? CblasTrans : CblasNoTrans, CblasNoTrans, g.m, g.n,
                g.k, 1.0, a, g.lda, b, g.ldb, g.beta, c, g.ldc);
  }

  void axpy(std::size_t count, const double* x, double* y, const char*) {
    cblas_daxpy(static_cast<int>(count), 1.0, x, 1, y, 1);
  }

  // cublasDgemmGroupedBatched's arguments (no transposes, beta 0), one product at a time.
  void grouped_gemm(const std::vector<int>& m, const std::vector<int>& n, const std::vector<int>& k,
                    const std::vector<double>& alpha, const double* const* a,
                    const std::vector<int>& lda, const double* const* b,
                    const std::vector<int>& ldb, double* const* c, const std::vector<int>& ldc,
                    const std::vector<int>& sizes, const char*) {
    for (std::size_t g = 0, i = 0; g < sizes.size(); ++g)
      for (int j = 0; j < sizes[g]; ++j, ++i)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m[g], n[g], k[g], alpha[g], a[i],
                    lda[g], b[i], ldb[g], 0.0, c[i], ldc[g]);
  }

 private:
  int multiprocessors_;
  std::vector<std::max_align_t> workspace_;
};

}  // namespace

void p2p(const steps::NearFieldRows& rows, const std::int32_t* work, const double* points_a,
         std::size_t count_a, const double* points_b, std::size_t count_b, double* results_a,
         double* results_b, bool inner, int multiprocessors) {
  Cpu d(multiprocessors);
  device::p2p(d, rows, work, points_a, count_a, points_b, count_b, results_a, results_b, inner);
}

void m2l(const std::int32_t* work, std::size_t work_size, const double* operators, std::size_t rank,
         const double* sources, double* targets, double root_width) {
  Cpu d;
  device::m2l(d, work, work_size, operators, rank, sources, targets, root_width);
}

void m2l_products(const std::int32_t* work, const M2LBatches& plan, const double* operators,
                  std::size_t rank, const double* sources, double* targets, double root_width) {
  Cpu d;
  device::m2l_products(d, work, plan, operators, rank, sources, targets, root_width);
}

void p2m(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* points, std::size_t point_count,
         double* multipoles) {
  Cpu d;
  device::p2m(d, work, work_size, tables, order, cube, points, point_count, multipoles);
}

void m2m(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const double* child_multipoles, double* parent_multipoles) {
  Cpu d;
  device::tensor(d, work, work_size, tables, order, true, child_multipoles, parent_multipoles);
}

void l2l(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const double* parent_locals, double* child_locals) {
  Cpu d;
  device::tensor(d, work, work_size, tables, order, false, parent_locals, child_locals);
}

void compress(const double* tables, int order, std::size_t rank, const double* multipoles,
              double* compressed, std::size_t cells) {
  Cpu d;
  device::compress(d, tables, order, rank, multipoles, compressed, cells);
}

void expand(const double* tables, int order, std::size_t rank, const double* compressed,
            double* locals, std::size_t cells) {
  Cpu d;
  device::expand(d, tables, order, rank, compressed, locals, cells);
}

void p2l(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* points, std::size_t point_count,
         double* locals) {
  Cpu d;
  device::p2l(d, work, work_size, tables, order, cube, points, point_count, locals);
}

void m2p(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* multipoles, const double* points,
         std::size_t point_count, double* results) {
  Cpu d;
  device::expansion_to_points<true>(d, work, work_size, tables, order, cube, multipoles, points,
                                    point_count, results);
}

void l2p(const std::int32_t* work, std::size_t work_size, const double* tables, int order,
         const steps::RootCube& cube, const double* locals, const double* points,
         std::size_t point_count, double* results) {
  Cpu d;
  device::expansion_to_points<false>(d, work, work_size, tables, order, cube, locals, points,
                                     point_count, results);
}

}  // namespace fmm::emulated
