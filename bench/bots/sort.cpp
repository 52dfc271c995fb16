#include "sort.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace bots {
namespace cilksort {
namespace {

void insertion_sort(Element* first, Element* last) {
  if (last - first < 2) return;
  for (Element* next = first + 1; next != last; ++next) {
    const Element value = *next;
    Element* hole = next;
    for (; hole != first && value < hole[-1]; --hole) *hole = hole[-1];
    *hole = value;
  }
}

// Hoare's partition of [first, last), at least 3 elements, around the median of the first, middle
// and last elements. The median is moved to the middle position, floor((n - 1) / 2): with the
// pivot's value there, Hoare's argument places the split strictly inside the range, so that both
// parts are non-empty and the quicksort always progresses.
Element* partition(Element* first, Element* last) {
  const std::ptrdiff_t n = last - first;
  Element* middle = first + (n - 1) / 2;
  Element* back = last - 1;
  if (*middle < *first) std::swap(*middle, *first);
  if (*back < *middle) {
    std::swap(*back, *middle);
    if (*middle < *first) std::swap(*middle, *first);
  }
  const Element pivot = *middle;
  std::ptrdiff_t i = -1;
  std::ptrdiff_t j = n;
  for (;;) {
    do {
      ++i;
    } while (first[i] < pivot);
    do {
      --j;
    } while (pivot < first[j]);
    if (i >= j) return first + j + 1;
    std::swap(first[i], first[j]);
  }
}

}  // namespace

// Recursing into the smaller part and looping on the larger bounds the stack depth by log2(n).
void quicksort(Element* first, Element* last) {
  while (static_cast<std::size_t>(last - first) >= insertion_sort_below) {
    Element* split_point = partition(first, last);
    if (split_point - first < last - split_point) {
      quicksort(first, split_point);
      first = split_point;
    } else {
      quicksort(split_point, last);
      last = split_point;
    }
  }
  insertion_sort(first, last);
}

bool is_sequential(const Merge& merge) {
  const auto smaller = std::min(merge.a_end - merge.a, merge.b_end - merge.b);
  return static_cast<std::size_t>(smaller) < sequential_merge_below;
}

void merge_sequential(const Merge& merge) {
  std::merge(merge.a, merge.a_end, merge.b, merge.b_end, merge.out);
}

// Every element of a before the median is <= it and every element of b before the split is < it:
// they form the lower merge, the rest the upper one, and the median sits between them.
std::array<Merge, 2> split(const Merge& merge) {
  Merge m = merge;
  if (m.a_end - m.a < m.b_end - m.b) {
    std::swap(m.a, m.b);
    std::swap(m.a_end, m.b_end);
  }
  const Element* median = m.a + (m.a_end - m.a) / 2;
  const Element* b_split = std::lower_bound(m.b, m.b_end, *median);
  Element* median_out = m.out + (median - m.a) + (b_split - m.b);
  *median_out = *median;
  return {Merge{m.a, median, m.b, b_split, m.out},
          Merge{median + 1, m.a_end, b_split, m.b_end, median_out + 1}};
}

std::array<Merge, 2> Quarters::pair_merges() const {
  return {
      Merge{data + begin(0), data + begin(1), data + begin(1), data + begin(2), scratch + begin(0)},
      Merge{data + begin(2), data + begin(3), data + begin(3), data + begin(4),
            scratch + begin(2)}};
}

Merge Quarters::final_merge() const {
  return Merge{scratch + begin(0), scratch + begin(2), scratch + begin(2), scratch + begin(4),
               data};
}

}  // namespace cilksort

namespace {

using cilksort::Element;
using cilksort::Merge;
using cilksort::Quarters;

void cilkmerge_sequential(const Merge& merge) {
  if (cilksort::is_sequential(merge)) {
    cilksort::merge_sequential(merge);
    return;
  }
  for (const Merge& half : cilksort::split(merge)) cilkmerge_sequential(half);
}

void cilksort_sequential(Element* data, Element* scratch, std::size_t n) {
  if (n < cilksort::quicksort_below) {
    cilksort::quicksort(data, data + n);
    return;
  }
  const Quarters quarters{data, scratch, n};
  for (int i = 0; i < 4; ++i)
    cilksort_sequential(data + quarters.begin(i), scratch + quarters.begin(i), quarters.size(i));
  for (const Merge& pair : quarters.pair_merges()) cilkmerge_sequential(pair);
  cilkmerge_sequential(quarters.final_merge());
}

// The halves and quarters live on the spawning task's stack until its sync, so that each closure
// holds references only and fits in the task's inline storage.
void cilkmerge_versa(versa::Runtime& rt, const Merge& merge) {
  if (cilksort::is_sequential(merge)) {
    cilksort::merge_sequential(merge);
    return;
  }
  const std::array<Merge, 2> halves = cilksort::split(merge);
  for (const Merge& half : halves)
    rt.spawn("cilkmerge", [&rt, &half] { cilkmerge_versa(rt, half); });
  rt.sync();
}

void cilksort_versa(versa::Runtime& rt, Element* data, Element* scratch, std::size_t n) {
  if (n < cilksort::quicksort_below) {
    cilksort::quicksort(data, data + n);
    return;
  }
  const Quarters quarters{data, scratch, n};
  for (int i = 0; i < 4; ++i)
    rt.spawn("cilksort", [&rt, &quarters, i] {
      cilksort_versa(rt, quarters.data + quarters.begin(i), quarters.scratch + quarters.begin(i),
                     quarters.size(i));
    });
  rt.sync();
  const std::array<Merge, 2> pairs = quarters.pair_merges();
  for (const Merge& pair : pairs)
    rt.spawn("cilkmerge", [&rt, &pair] { cilkmerge_versa(rt, pair); });
  rt.sync();
  cilkmerge_versa(rt, quarters.final_merge());
}

// BOTS's generator: n swaps of position i with a position drawn by a linear congruential
// generator (the ANSI C example's constants, 64-bit state) seeded with 1.
std::vector<Element> scrambled_identity(std::size_t n) {
  std::vector<Element> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<Element>(i);
  std::uint64_t state = 1;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 1103515245u + 12345u;
    std::swap(values[i], values[state % n]);
  }
  return values;
}

}  // namespace

Sort::Sort(std::size_t n) {
  if (n < 4) throw std::invalid_argument("sort: n must be at least 4, not " + std::to_string(n));
  input_ = scrambled_identity(n);
  data_ = input_;
  scratch_.resize(n);
}

void Sort::reset() { std::copy(input_.begin(), input_.end(), data_.begin()); }

void Sort::run_sequential() { cilksort_sequential(data_.data(), scratch_.data(), data_.size()); }

void Sort::run_versa(versa::Runtime& rt) {
  rt.spawn("cilksort",
           [this, &rt] { cilksort_versa(rt, data_.data(), scratch_.data(), data_.size()); });
  rt.sync();
}

std::string Sort::verify() const {
  for (std::size_t i = 0; i < data_.size(); ++i)
    if (data_[i] != static_cast<Element>(i))
      return "sort: element " + std::to_string(i) + " is " + std::to_string(data_[i]) +
             " (the input is a permutation of 0.." + std::to_string(data_.size() - 1) +
             ", sorted it is the identity)";
  return {};
}

}  // namespace bots
