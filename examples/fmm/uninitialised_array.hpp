// Arrays of numbers whose growth leaves the new elements unwritten, for the tree's arrays of one
// number per point: a std::vector writes every new element in the calling thread as it grows
// (at 10^7 points, 0.04 s per array of doubles on one core, its pages' first touch included),
// where the tree's arrays are then written in full by all cores.
//
//   fmm::UninitialisedArray<double> x;
//   fmm::resize_unwritten(x, n);  // then x[i] is written for every i, in parallel
#pragma once

#include <boost/container/vector.hpp>
#include <cstddef>

namespace fmm {

template <typename T>
using UninitialisedArray = boost::container::vector<T>;

// Resizes `array` to `size` elements; those added are default-initialised, which leaves numbers
// unwritten. The caller writes each of them before it is read.
template <typename T>
void resize_unwritten(UninitialisedArray<T>& array, std::size_t size) {
  array.resize(size, boost::container::default_init);
}

}  // namespace fmm
