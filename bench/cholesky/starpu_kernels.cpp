#include "cholesky/starpu_kernels.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <cstring>
#include <stdexcept>
#include <utility>

#include "cholesky.hpp"
#include "common/starpu_support.hpp"

namespace bench::starpu_cholesky {
namespace {

// A tile as StarPU's matrix interface describes it: nx is the contiguous dimension, so in
// column-major terms nx is the number of rows and ny the number of columns.
struct Tile {
  double* data;
  int rows;
  int cols;
  int ld;
};

Tile tile_of(void* buffer) {
  const auto* m = static_cast<const starpu_matrix_interface*>(buffer);
  return {reinterpret_cast<double*>(m->ptr), static_cast<int>(m->nx), static_cast<int>(m->ny),
          static_cast<int>(m->ld)};
}

void history(starpu_perfmodel& model, const std::string& symbol) {
  model.type = STARPU_HISTORY_BASED;
  model.symbol = symbol.c_str();
}

}  // namespace

void Failure::record(int k, int code, std::string gpu_message, const char* failed_kernel) {
  const std::lock_guard<std::mutex> lock(mutex);
  if (tile < 0) {
    kernel = failed_kernel;
    tile = k;
    info = code;
    message = std::move(gpu_message);
  }
}

void Failure::throw_if_failed(const char* who, int tile_size) const {
  if (tile < 0) return;
  const std::string where = "tile (" + std::to_string(tile) + "," + std::to_string(tile) + ")";
  if (!message.empty())
    throw std::runtime_error(std::string(who) + ": " + kernel + " failed on " + where +
                             " on a GPU: " + message);
  if (std::strcmp(kernel, "trtri") == 0)
    throw std::runtime_error(
        std::string(who) + ": trtri failed on " + where +
        (info > 0 ? ", L(k,k) is singular (diagonal entry " + std::to_string(info) + ")"
                  : ", LAPACKE_dtrtri rejected argument " + std::to_string(-info)));
  if (info > 0)
    throw std::runtime_error(std::string(who) +
                             ": matrix is not positive definite (potrf failed on " + where +
                             ", leading minor " + std::to_string(tile * tile_size + info) + ")");
  throw std::runtime_error(std::string(who) + ": LAPACKE_dpotrf rejected argument " +
                           std::to_string(-info) + " on " + where +
                           (info == -4 ? " (NaN in the tile)" : ""));
}

void potrf_body(void* buffers[], void* cl_arg) {
  const Tile akk = tile_of(buffers[0]);
  const auto* arg = static_cast<const PotrfArg*>(cl_arg);
  lapack_int info = 0;
  arg->clock->time(
      [&] { info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', akk.rows, akk.data, akk.ld); });
  if (info != 0) arg->failure->record(arg->k, static_cast<int>(info));
}

void trsm_body(void* buffers[], void* cl_arg) {
  const Tile lkk = tile_of(buffers[0]);
  const Tile amk = tile_of(buffers[1]);
  static_cast<KernelClock*>(cl_arg)->time([&] {
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, amk.rows, amk.cols,
                1.0, lkk.data, lkk.ld, amk.data, amk.ld);
  });
}

void trtri_body(void* buffers[], void* cl_arg) {
  const Tile lkk = tile_of(buffers[0]);
  const Tile inverse = tile_of(buffers[1]);
  const auto* arg = static_cast<const PotrfArg*>(cl_arg);
  int info = 0;
  arg->clock->time([&] {
    info =
        cholesky::Blas<double>::invert_lower(lkk.rows, lkk.data, lkk.ld, inverse.data, inverse.ld);
  });
  if (info != 0) arg->failure->record(arg->k, info, {}, "trtri");
}

void trmm_body(void* buffers[], void* cl_arg) {
  const Tile inverse = tile_of(buffers[0]);
  const Tile amk = tile_of(buffers[1]);
  static_cast<KernelClock*>(cl_arg)->time([&] {
    cholesky::Blas<double>::trmm(amk.rows, amk.cols, inverse.data, inverse.ld, amk.data, amk.ld);
  });
}

void syrk_body(void* buffers[], void* cl_arg) {
  const Tile amk = tile_of(buffers[0]);
  const Tile amm = tile_of(buffers[1]);
  static_cast<KernelClock*>(cl_arg)->time([&] {
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, amm.rows, amk.cols, -1.0, amk.data, amk.ld,
                1.0, amm.data, amm.ld);
  });
}

void gemm_body(void* buffers[], void* cl_arg) {
  const Tile amk = tile_of(buffers[0]);
  const Tile ajk = tile_of(buffers[1]);
  const Tile amj = tile_of(buffers[2]);
  static_cast<KernelClock*>(cl_arg)->time([&] {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, amj.rows, amj.cols, amk.cols, -1.0,
                amk.data, amk.ld, ajk.data, ajk.ld, 1.0, amj.data, amj.ld);
  });
}

Models::Models(const std::string& prefix)
    : names{prefix + "_potrf", prefix + "_trsm", prefix + "_trtri",
            prefix + "_trmm",  prefix + "_syrk", prefix + "_gemm"} {
  history(potrf, names[0]);
  history(trsm, names[1]);
  history(trtri, names[2]);
  history(trmm, names[3]);
  history(syrk, names[4]);
  history(gemm, names[5]);
}

bool reads_models(const char* scheduler) {
  return std::strncmp(scheduler, "dm", 2) == 0 || std::strstr(scheduler, "heft") != nullptr;
}

Codelets::Codelets(const char* scheduler, Models& models, bool cuda) {
  if (cuda && !cuda_codelets_built())
    throw std::invalid_argument("StarPU Cholesky codelets: this build has no CUDA bodies");
  const bool with_models = reads_models(scheduler);
  const auto model = [&](starpu_perfmodel& m) { return with_models ? &m : nullptr; };
  potrf = make_codelet(potrf_body, 1, {STARPU_RW}, model(models.potrf));
  trsm = make_codelet(trsm_body, 2, {STARPU_R, STARPU_RW}, model(models.trsm));
  trtri = make_codelet(trtri_body, 2, {STARPU_R, STARPU_W}, model(models.trtri));
  trmm = make_codelet(trmm_body, 2, {STARPU_R, STARPU_RW}, model(models.trmm));
  syrk = make_codelet(syrk_body, 2, {STARPU_R, STARPU_RW}, model(models.syrk));
  gemm = make_codelet(gemm_body, 3, {STARPU_R, STARPU_R, STARPU_RW}, model(models.gemm));
  if (cuda) add_cuda_bodies(*this);
}

}  // namespace bench::starpu_cholesky
