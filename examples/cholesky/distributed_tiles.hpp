// The tiled Cholesky of cholesky.hpp on the ranks of a versa::mpi::Runtime, as cholesky_mpi
// runs it: the tiles of the lower triangle registered 2-D block-cyclic, each on its owner in
// the owner's OwnedTiles and with no memory elsewhere, and the factorisation submitted with
// each column's copies dropped once its step is submitted.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cholesky.hpp"
#include "owned_tiles.hpp"
#include "versa/mpi.hpp"

namespace cholesky {

// The lower triangle's tiles, registered on every rank with their block-cyclic owner: on the
// owner in its OwnedTiles, elsewhere with no memory (the runtime maps a copy when a version
// arrives, and gives it back at a flush).
class DistributedTiles {
 public:
  DistributedTiles(versa::mpi::Runtime& rt, OwnedTiles& owned, const versa::mpi::BlockCyclic& grid)
      : tiles_(owned.tile_rows()) {
    handles_.resize(tiles_ * tiles_);
    for (std::size_t i = 0; i < tiles_; ++i)
      rows_.push_back(static_cast<std::size_t>(owned.rows(i)));
    for (std::size_t j = 0; j < tiles_; ++j)
      for (std::size_t i = j; i < tiles_; ++i) {
        const auto rows = static_cast<std::size_t>(owned.rows(i));
        handles_[i + j * tiles_] =
            rt.tile(owned.data(i, j), rows, static_cast<std::size_t>(owned.rows(j)), rows,
                    grid.owner(i, j), "A(" + std::to_string(i) + "," + std::to_string(j) + ")");
      }
  }
  std::size_t tile_rows() const { return tiles_; }
  // The rows of tile row i (the last may be short).
  std::size_t rows_of(std::size_t i) const { return rows_[i]; }
  const versa::TileHandle<double>& operator()(std::size_t i, std::size_t j) const {
    return handles_[i + j * tiles_];
  }
  // Drops the other ranks' copies of column k (every rank calls it): its last readers are
  // step k's tasks, and a rank that keeps them holds every tile it ever received.
  void flush_column(versa::mpi::Runtime& rt, std::size_t k) const {
    for (std::size_t m = k; m < tiles_; ++m) rt.flush((*this)(m, k));
  }
  // The factor gathered on rank 0 (every rank calls it, after the factorisation's wait_all):
  // the n x n matrix there, with L in its lower triangle; empty elsewhere.
  std::vector<double> gather_on_rank_0(versa::mpi::Runtime& rt, long n, long tile) const {
    for (std::size_t j = 0; j < tiles_; ++j)
      for (std::size_t i = j; i < tiles_; ++i) rt.fetch((*this)(i, j), 0);
    rt.wait_all();
    std::vector<double> factor;
    if (rt.rank() != 0) return factor;
    factor.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
    for (std::size_t j = 0; j < tiles_; ++j)
      for (std::size_t i = j; i < tiles_; ++i) {
        const auto held = rt.local().acquire(versa::read((*this)(i, j)));
        const versa::Tile<const double>& t = held.view();
        place_tile(factor.data(), n, tile, i, j, t.data(), t.ld(), t.rows(), t.cols());
      }
    return factor;
  }

 private:
  std::size_t tiles_;
  std::vector<std::size_t> rows_;
  std::vector<versa::TileHandle<double>> handles_;
};

// Submits the factorisation of `tiles` (every rank calls it) and returns without waiting:
// submit_factorisation with the example's kernels, each column's copies flushed after its
// step, and, on a rank with devices, each tile copied home once final (as the cholesky tool
// does: Schedule::home_when_final).
inline void submit_distributed_factorisation(versa::mpi::Runtime& rt, const DistributedTiles& tiles,
                                             PanelSolve solve = PanelSolve::trsm) {
  Schedule schedule;
  schedule.home_when_final = rt.local().device_count() > 0;
  schedule.after_step = [&](int k) { tiles.flush_column(rt, static_cast<std::size_t>(k)); };
  submit_factorisation(rt, tiles, solve, {}, schedule);
}

}  // namespace cholesky
