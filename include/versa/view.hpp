#pragma once

#include <cstddef>
#include <type_traits>

namespace versa {

// A contiguous array of T handed to a task body: `Span<const T>` for read accesses, `Span<T>`
// for the others. A view does not own its data and is valid only while the task runs (or while
// the HostView that produced it lives).
template <class T>
class Span {
 public:
  using element_type = T;

  constexpr Span() = default;
  constexpr Span(T* data, std::size_t size) : data_(data), size_(size) {}

  // A writable span converts to a read-only one.
  template <class U, class = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
  constexpr Span(Span<U> other) : data_(other.data()), size_(other.size()) {}

  constexpr T* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T& operator[](std::size_t i) const { return data_[i]; }
  constexpr T* begin() const { return data_; }
  constexpr T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// A column-major 2-D block of T with a leading dimension, as BLAS and LAPACK expect it:
// element (i, j) is data()[i + j * ld()]. `Tile<const T>` for read accesses.
template <class T>
class Tile {
 public:
  using element_type = T;

  constexpr Tile() = default;
  constexpr Tile(T* data, std::size_t rows, std::size_t cols, std::size_t ld)
      : data_(data), rows_(rows), cols_(cols), ld_(ld) {}

  template <class U, class = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
  constexpr Tile(Tile<U> other)
      : data_(other.data()), rows_(other.rows()), cols_(other.cols()), ld_(other.ld()) {}

  constexpr T* data() const { return data_; }
  constexpr std::size_t rows() const { return rows_; }
  constexpr std::size_t cols() const { return cols_; }
  constexpr std::size_t ld() const { return ld_; }
  constexpr T& operator()(std::size_t i, std::size_t j) const { return data_[i + j * ld_]; }

 private:
  T* data_ = nullptr;
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::size_t ld_ = 0;
};

}  // namespace versa
