// The tile kernels on the GPU: cuSOLVER for potrf and trtri, cuBLAS for the others, queued on the
// GPU worker's stream with its library handles. They mirror Blas<T> (cholesky.hpp) for double
// and float; pointers are device tiles, column-major with their leading dimension, and sizes are
// ints as cuBLAS takes them. Each throws std::runtime_error when the library fails, and potrf
// also, as on the CPU, when the tile is not positive definite.
//
// Declared without any CUDA header, so that the CUDA bodies in cholesky.hpp compile in every
// build; defined in cuda_kernels.cu, which only builds with the CUDA backend compile (without
// it Versa drops those bodies, and nothing refers to these functions).
#pragma once

#include "versa/cuda_fwd.hpp"

namespace cholesky::cuda {

void potrf(versa::CudaContext& gpu, int n, double* a, int lda);
void potrf(versa::CudaContext& gpu, int n, float* a, int lda);

void trsm(versa::CudaContext& gpu, int m, int n, const double* l, int ldl, double* b, int ldb);
void trsm(versa::CudaContext& gpu, int m, int n, const float* l, int ldl, float* b, int ldb);

// inverse = L^-1 (lower triangle), L the lower triangle of l; n x n. Throws when L is singular.
void invert_lower(versa::CudaContext& gpu, int n, const double* l, int ldl, double* inverse,
                  int ldi);
void invert_lower(versa::CudaContext& gpu, int n, const float* l, int ldl, float* inverse, int ldi);

// b = b inverse^T, inverse the lower triangle of an n x n tile, b m x n: trsm's result, from
// invert_lower's.
void trmm(versa::CudaContext& gpu, int m, int n, const double* inverse, int ldi, double* b,
          int ldb);
void trmm(versa::CudaContext& gpu, int m, int n, const float* inverse, int ldi, float* b, int ldb);

void syrk(versa::CudaContext& gpu, int n, int k, const double* a, int lda, double* c, int ldc);
void syrk(versa::CudaContext& gpu, int n, int k, const float* a, int lda, float* c, int ldc);

void gemm(versa::CudaContext& gpu, int m, int n, int k, const double* a, int lda, const double* b,
          int ldb, double* c, int ldc);
void gemm(versa::CudaContext& gpu, int m, int n, int k, const float* a, int lda, const float* b,
          int ldb, float* c, int ldc);

}  // namespace cholesky::cuda
