// The Cholesky's triangular solve B := B L^-T (B m x n, L n x n lower, column-major) cut in
// halves of L down to columns of `leaf`, so that most of its flops are matrix products: the GPU's
// trsm kernel runs a 2048-tile's solve at a few TFLOP/s, a seventh of what its gemm reaches
// (cuBLAS on the H200, docs/performance.md), and the solve is on the factorisation's critical
// path. Written over two operations, so that the GPU (cuBLAS, cuda_kernels.cu) and a test
// (OpenBLAS) run the same recursion:
//   trsm(m, n, l, ldl, b, ldb)                 B := B L^-T, the solve itself, for n <= leaf
//   gemm(m, n, k, a, lda, b, ldb, c, ldc)      C := C - A B^T (A m x k, B n x k), as the
//                                              Cholesky's gemm tasks compute
#pragma once

namespace cholesky {

// The columns of L below which blocked_trsm calls the solve itself: a product of k = 256 still
// runs near the GPU's gemm rate, and the solves then hold an eighth of a 2048-tile's flops.
inline constexpr int trsm_leaf = 256;

// With L = [L11 0; L21 L22] and B = [B1 B2] split after column n1: X1 = B1 L11^-T, then
// X2 = (B2 - X1 L21^T) L22^-T.
template <class T, class Trsm, class Gemm>
void blocked_trsm(int m, int n, const T* l, int ldl, T* b, int ldb, int leaf, const Trsm& trsm,
                  const Gemm& gemm) {
  if (n <= leaf) {
    trsm(m, n, l, ldl, b, ldb);
    return;
  }
  // The first half rounded to whole leaves, so that every solve but the last is `leaf` wide.
  const int n1 = (n / 2 + leaf - 1) / leaf * leaf;
  const int n2 = n - n1;
  const long step = static_cast<long>(n1) * ldl, b_step = static_cast<long>(n1) * ldb;
  blocked_trsm(m, n1, l, ldl, b, ldb, leaf, trsm, gemm);
  gemm(m, n2, n1, b, ldb, l + n1, ldl, b + b_step, ldb);
  blocked_trsm(m, n2, l + step + n1, ldl, b + b_step, ldb, leaf, trsm, gemm);
}

}  // namespace cholesky
