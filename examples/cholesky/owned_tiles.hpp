// The part of the test matrix that one rank of a distributed Cholesky holds: the tiles of the
// lower triangle it owns, each in memory of its own. cholesky_mpi and its StarPU-MPI peer
// (bench/mpi/starpu_mpi.cpp) register these on their owner and no memory elsewhere, so that a
// rank holds about 1/P of the triangle, not the whole matrix, plus the copies its tasks read.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cholesky.hpp"

namespace cholesky {

class OwnedTiles {
 public:
  // The tiles (i, j), i >= j, of the test matrix of order n (spd_matrix) in tiles of `tile` for
  // which owner(i, j) == rank, made here: column-major, the leading dimension the tile's rows.
  template <class Owner>
  OwnedTiles(long n, long tile, int rank, const Owner& owner)
      : n_(n), tile_(tile), tiles_(static_cast<std::size_t>((n + tile - 1) / tile)) {
    data_.resize(tiles_ * tiles_);
    for (std::size_t j = 0; j < tiles_; ++j)
      for (std::size_t i = j; i < tiles_; ++i) {
        if (owner(i, j) != rank) continue;
        std::vector<double>& t = data_[i + j * tiles_];
        t.resize(static_cast<std::size_t>(rows(i) * rows(j)));
        spd_block(n_, static_cast<long>(i) * tile_, static_cast<long>(j) * tile_, rows(i), rows(j),
                  t.data(), static_cast<std::size_t>(rows(i)));
        bytes_ += t.size() * sizeof(double);
      }
  }

  std::size_t tile_rows() const { return tiles_; }
  // The rows of tile row i (its columns for tile column i): the tile size but at the edge.
  long rows(std::size_t i) const { return std::min(tile_, n_ - static_cast<long>(i) * tile_); }
  // Tile (i, j), i >= j, with leading dimension rows(i); null where another rank owns it.
  double* data(std::size_t i, std::size_t j) {
    std::vector<double>& t = data_[i + j * tiles_];
    return t.empty() ? nullptr : t.data();
  }
  // The memory of the tiles this rank owns.
  std::size_t bytes() const { return bytes_; }

 private:
  long n_;
  long tile_;
  std::size_t tiles_;
  std::vector<std::vector<double>> data_;
  std::size_t bytes_ = 0;
};

// Copies tile (i, j), rows x cols at `from` with leading dimension ld, into the n x n
// column-major matrix `to` cut in tiles of `tile`: how rank 0 assembles the gathered factor.
inline void place_tile(double* to, long n, long tile, std::size_t i, std::size_t j,
                       const double* from, std::size_t ld, std::size_t rows, std::size_t cols) {
  double* corner = to + i * static_cast<std::size_t>(tile) +
                   j * static_cast<std::size_t>(tile) * static_cast<std::size_t>(n);
  for (std::size_t c = 0; c < cols; ++c)
    std::copy_n(from + c * ld, rows, corner + c * static_cast<std::size_t>(n));
}

// The most memory this process has held at once (its peak resident set), in MiB.
inline double peak_resident_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: KiB
}

}  // namespace cholesky
