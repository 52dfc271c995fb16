#pragma once

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "versa/handle.hpp"
#include "versa/runtime.hpp"

namespace versa {

// A column-major matrix cut into square tiles, one handle per tile, named "<name>(i,j)". Edge
// tiles are smaller when the size is not a multiple of the tile size. The matrix must outlive
// this object; tiles are registered in place (nothing is copied), and the matrix is pinned
// (page-locked) while this object lives when GPUs are in use.
//
//   versa::TiledMatrix<double> A(rt, data, n, n, /*ld=*/n, /*tile=*/512);
//   rt.submit(potrf, versa::write(A(k, k)));
template <class T>
class TiledMatrix {
 public:
  // Throws std::invalid_argument when tile is 0 or ld < rows.
  TiledMatrix(Runtime& rt, T* data, std::size_t rows, std::size_t cols, std::size_t ld,
              std::size_t tile, const std::string& name = "A")
      : rows_(rows), cols_(cols), tile_(tile) {
    if (tile == 0)
      throw std::invalid_argument("TiledMatrix '" + name + "': tile size must be positive");
    if (ld < rows)
      throw std::invalid_argument("TiledMatrix '" + name + "': leading dimension " +
                                  std::to_string(ld) + " is smaller than the row count " +
                                  std::to_string(rows));
    tile_rows_ = (rows + tile - 1) / tile;
    tile_cols_ = (cols + tile - 1) / tile;
    if (rows > 0 && cols > 0)
      pinned_ = rt.pin_host_memory(data, (ld * (cols - 1) + rows) * sizeof(T));
    tiles_.reserve(tile_rows_ * tile_cols_);
    for (std::size_t j = 0; j < tile_cols_; ++j)
      for (std::size_t i = 0; i < tile_rows_; ++i)
        tiles_.push_back(rt.tile(data + i * tile + j * tile * ld, rows_of(i), cols_of(j), ld,
                                 name + "(" + std::to_string(i) + "," + std::to_string(j) + ")"));
  }

  // Number of tile rows and tile columns.
  std::size_t tile_rows() const { return tile_rows_; }
  std::size_t tile_cols() const { return tile_cols_; }
  // Rows of tile row i and columns of tile column j (smaller at the edges).
  std::size_t rows_of(std::size_t i) const { return std::min(tile_, rows_ - i * tile_); }
  std::size_t cols_of(std::size_t j) const { return std::min(tile_, cols_ - j * tile_); }

  // The handle of tile (i, j).
  const TileHandle<T>& operator()(std::size_t i, std::size_t j) const {
    return tiles_[i + j * tile_rows_];
  }

 private:
  std::size_t rows_, cols_, tile_;
  std::size_t tile_rows_ = 0, tile_cols_ = 0;
  PinnedHostMemory pinned_;  // declared before tiles_: unpinned after the tiles are gone
  std::vector<TileHandle<T>> tiles_;
};

}  // namespace versa
