// sparselu on OpenMP tasks, in two versions. run_openmp is BOTS's "single" version: one thread
// factors each diagonal block itself and creates the other block operations as tasks, with a
// taskwait after the row and column solves and another after the updates. run_openmp_depend
// makes every block operation a task ordered by `depend` clauses on the blocks it reads and
// writes, which is what Versa's accesses express, and has no barrier until the end.
#include <omp.h>

#include "sparselu.hpp"

namespace bots {

void SparseLu::run_openmp(int threads) {
  const int n = block_size_;
#pragma omp parallel num_threads(threads)
#pragma omp single
  for (int k = 0; k < blocks_; ++k) {
    double* diag = block_data(k, k);
    sparselu::lu0(diag, n);
    for (int j = k + 1; j < blocks_; ++j)
      if (nonzero(k, j)) {
        double* row_block = block_data(k, j);
#pragma omp task untied default(none) firstprivate(diag, row_block, n)
        sparselu::fwd(diag, row_block, n);
      }
    for (int i = k + 1; i < blocks_; ++i)
      if (nonzero(i, k)) {
        double* col_block = block_data(i, k);
#pragma omp task untied default(none) firstprivate(diag, col_block, n)
        sparselu::bdiv(diag, col_block, n);
      }
#pragma omp taskwait
    for (int i = k + 1; i < blocks_; ++i)
      if (nonzero(i, k))
        for (int j = k + 1; j < blocks_; ++j)
          if (nonzero(k, j)) {
            double* col_block = block_data(i, k);
            double* row_block = block_data(k, j);
            double* inner = block_data(i, j);
#pragma omp task untied default(none) firstprivate(col_block, row_block, inner, n)
            sparselu::bmod(col_block, row_block, inner, n);
          }
#pragma omp taskwait
  }
}

void SparseLu::run_openmp_depend(int threads) {
  const int n = block_size_;
  // A block is named in a depend clause by its first element; the tasks wait for each other
  // only through those, and the implicit barrier at the end of `single` waits for them all.
#pragma omp parallel num_threads(threads)
#pragma omp single
  for (int k = 0; k < blocks_; ++k) {
    double* diag = block_data(k, k);
#pragma omp task untied default(none) firstprivate(diag, n) depend(inout : diag[0])
    sparselu::lu0(diag, n);
    for (int j = k + 1; j < blocks_; ++j)
      if (nonzero(k, j)) {
        double* row_block = block_data(k, j);
#pragma omp task untied default(none) firstprivate(diag, row_block, n) depend(in         \
                                                                              : diag[0]) \
    depend(inout                                                                         \
           : row_block[0])
        sparselu::fwd(diag, row_block, n);
      }
    for (int i = k + 1; i < blocks_; ++i)
      if (nonzero(i, k)) {
        double* col_block = block_data(i, k);
#pragma omp task untied default(none) firstprivate(diag, col_block, n) depend(in         \
                                                                              : diag[0]) \
    depend(inout                                                                         \
           : col_block[0])
        sparselu::bdiv(diag, col_block, n);
      }
    for (int i = k + 1; i < blocks_; ++i)
      if (nonzero(i, k))
        for (int j = k + 1; j < blocks_; ++j)
          if (nonzero(k, j)) {
            double* col_block = block_data(i, k);
            double* row_block = block_data(k, j);
            double* inner = block_data(i, j);
#pragma omp task untied default(none) firstprivate(col_block, row_block, inner, n) \
    depend(in                                                                      \
           : col_block[0], row_block[0]) depend(inout                              \
                                                : inner[0])
            sparselu::bmod(col_block, row_block, inner, n);
          }
  }
}

}  // namespace bots
