#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "group_kernels_cuda.hpp"
#include "group_kernels_device.hpp"
#include "versa/cuda.hpp"

namespace fmm::cuda {

namespace {

// The Device of group_kernels_device.hpp on the GPU worker's stream and cuBLAS handle.
class Gpu {
 public:
  explicit Gpu(versa::CudaContext& context) : context_(context) {}

  template <class... Parameters, class... Arguments>
  void launch(const char* name, void (*kernel)(Parameters...), unsigned blocks, unsigned threads,
              std::size_t shared_bytes, Arguments&&... arguments) {
    // Dynamic shared memory beyond the default 48 KiB must be asked for per kernel; a refusal
    // (more than the device has) is reported as itself, not as the launch's failure after it.
    if (shared_bytes > 48 * 1024)
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(shared_bytes)),
            ("asking for " + std::to_string(shared_bytes) +
             " bytes of shared memory per block for " + name)
                .c_str());
    kernel<<<blocks, threads, shared_bytes, context_.stream()>>>(
        std::forward<Arguments>(arguments)...);
    check(cudaGetLastError(), (std::string(name) + " launch").c_str());
  }

  void* workspace(std::size_t bytes) { return context_.workspace(bytes); }

  int multiprocessors() {
    int count = 0;
    check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, context_.device()),
          "asking for the device's multiprocessors");
    return count;
  }

  void copy(double* to, const double* from, std::size_t count, const char* what) {
    check(cudaMemcpyAsync(to, from, count * sizeof(double), cudaMemcpyDeviceToDevice,
                          context_.stream()),
          what);
  }

  void gemm(const steps::GemmShape& g, const double* a, const double* b, double* c,
            const char* what) {
    const double one = 1;
    check(cublasDgemm(context_.cublas(), g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N,
                      g.m, g.n, g.k, &one, a, g.lda, b, g.ldb, &g.beta, c, g.ldc),
          what);
  }

  void axpy(std::size_t count, const double* x, double* y, const char* what) {
    const double one = 1;
    check(cublasDaxpy(context_.cublas(), static_cast<int>(count), &one, x, 1, y, 1), what);
  }

  void grouped_gemm(const std::vector<int>& m, const std::vector<int>& n, const std::vector<int>& k,
                    const std::vector<double>& alpha, const double* const* a,
                    const std::vector<int>& lda, const double* const* b,
                    const std::vector<int>& ldb, double* const* c, const std::vector<int>& ldc,
                    const std::vector<int>& sizes, const char* what) {
    const std::size_t groups = sizes.size();
    const std::vector<cublasOperation_t> no_transpose(groups, CUBLAS_OP_N);
    const std::vector<double> beta(groups, 0.0);
    check(cublasDgemmGroupedBatched(context_.cublas(), no_transpose.data(), no_transpose.data(),
                                    m.data(), n.data(), k.data(), alpha.data(), a, lda.data(), b,
                                    ldb.data(), beta.data(), c, ldc.data(),
                                    static_cast<int>(groups), sizes.data()),
          what);
  }

 private:
  static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
      throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(status));
  }
  static void check(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error(std::string(what) + " failed: " + cublasGetStatusString(status));
  }

  versa::CudaContext& context_;
};

}  // namespace

void p2p(versa::CudaContext& gpu, const steps::NearFieldRows& rows, const std::int32_t* work,
         const double* points_a, std::size_t count_a, const double* points_b, std::size_t count_b,
         double* results_a, double* results_b, bool inner) {
  Gpu d(gpu);
  device::p2p(d, rows, work, points_a, count_a, points_b, count_b, results_a, results_b, inner);
}

void m2l(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* operators, std::size_t rank, const double* sources, double* targets,
         double root_width) {
  Gpu d(gpu);
  device::m2l(d, work, work_size, operators, rank, sources, targets, root_width);
}

void m2l_products(versa::CudaContext& gpu, const std::int32_t* work, const M2LBatches& plan,
                  const double* operators, std::size_t rank, const double* sources, double* targets,
                  double root_width) {
  Gpu d(gpu);
  device::m2l_products(d, work, plan, operators, rank, sources, targets, root_width);
}

void p2m(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const steps::RootCube& cube, const double* points,
         std::size_t point_count, double* multipoles) {
  Gpu d(gpu);
  device::p2m(d, work, work_size, tables, order, cube, points, point_count, multipoles);
}

void m2m(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const double* child_multipoles,
         double* parent_multipoles) {
  Gpu d(gpu);
  device::tensor(d, work, work_size, tables, order, true, child_multipoles, parent_multipoles);
}

void l2l(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const double* parent_locals, double* child_locals) {
  Gpu d(gpu);
  device::tensor(d, work, work_size, tables, order, false, parent_locals, child_locals);
}

void compress(versa::CudaContext& gpu, const double* tables, int order, std::size_t rank,
              const double* multipoles, double* compressed, std::size_t cells) {
  Gpu d(gpu);
  device::compress(d, tables, order, rank, multipoles, compressed, cells);
}

void expand(versa::CudaContext& gpu, const double* tables, int order, std::size_t rank,
            const double* compressed, double* locals, std::size_t cells) {
  Gpu d(gpu);
  device::expand(d, tables, order, rank, compressed, locals, cells);
}

void p2l(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const steps::RootCube& cube, const double* points,
         std::size_t point_count, double* locals) {
  Gpu d(gpu);
  device::p2l(d, work, work_size, tables, order, cube, points, point_count, locals);
}

void m2p(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const steps::RootCube& cube, const double* multipoles,
         const double* points, std::size_t point_count, double* results) {
  Gpu d(gpu);
  device::expansion_to_points<true>(d, work, work_size, tables, order, cube, multipoles, points,
                                    point_count, results);
}

void l2p(versa::CudaContext& gpu, const std::int32_t* work, std::size_t work_size,
         const double* tables, int order, const steps::RootCube& cube, const double* locals,
         const double* points, std::size_t point_count, double* results) {
  Gpu d(gpu);
  device::expansion_to_points<false>(d, work, work_size, tables, order, cube, locals, points,
                                     point_count, results);
}

}  // namespace fmm::cuda
