// BOTS sort: cilksort (Frigo's Cilk mergesort, after Akl and Santoro's parallel merge), which
// sorts the four quarters of the array as tasks, merges them pairwise into a scratch array as two
// tasks and merges the two halves back; every merge splits at the median of the larger input
// into two merge tasks. Below the suite's cut-offs (2048 elements to sort, a smaller merge input
// of 2048 elements) the work is sequential: quicksort with a median-of-three pivot, insertion
// sort below 20 elements, and a plain merge.
//
// Input: a permutation of 0..n-1 made as BOTS makes it (the identity scrambled by n swaps with
// its linear congruential generator, seed 1), so that the sorted array is the identity: the
// verification, as the suite's, checks a[i] == i, which proves the output both sorted and a
// permutation of the input.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernel.hpp"
#include "versa/versa.hpp"

namespace bots {

// cilksort's pieces, shared by the recursions of every system.
namespace cilksort {

using Element = std::int64_t;

// The suite's cut-offs: shorter ranges are sorted by quicksort, shorter ranges within quicksort
// by insertion sort, and merges whose smaller input is shorter are done sequentially.
inline constexpr std::size_t quicksort_below = 2048;
inline constexpr std::size_t insertion_sort_below = 20;
inline constexpr std::size_t sequential_merge_below = 2048;

// Sorts [first, last) sequentially: the leaf of cilksort.
[[gnu::noinline, gnu::aligned(64)]] void quicksort(Element* first, Element* last);

// Merging the sorted ranges [a, a_end) and [b, b_end) into out (which overlaps neither).
struct Merge {
  const Element* a;
  const Element* a_end;
  const Element* b;
  const Element* b_end;
  Element* out;
};

// Whether the merge's smaller input is below the cut-off, so that it runs as one plain merge.
bool is_sequential(const Merge& merge);
// Merges sequentially.
[[gnu::noinline, gnu::aligned(64)]] void merge_sequential(const Merge& merge);
// Splits a merge in two independent ones: takes the median of the larger input, finds where it
// falls in the smaller one by binary search and writes it to its final place in the output.
std::array<Merge, 2> split(const Merge& merge);

// One step of cilksort on data[0, n) with scratch[0, n): quarter i is [begin(i), begin(i + 1)).
struct Quarters {
  Element* data;
  Element* scratch;
  std::size_t n;

  std::size_t begin(int quarter) const { return quarter == 4 ? n : quarter * (n / 4); }
  std::size_t size(int quarter) const { return begin(quarter + 1) - begin(quarter); }
  // Merges of quarters 0+1 and 2+3 into the scratch array.
  std::array<Merge, 2> pair_merges() const;
  // The merge of the scratch array's halves back into data.
  Merge final_merge() const;
};

}  // namespace cilksort

class Sort {
 public:
  static constexpr const char* name = "sort";

  explicit Sort(Scale scale) : Sort(scale == Scale::bench ? std::size_t{1} << 25 : 1u << 18) {}
  // n >= 4 elements.
  explicit Sort(std::size_t n);

  std::string input() const { return "n=" + std::to_string(input_.size()); }
  void reset();
  void run_sequential();
  void run_versa(versa::Runtime& rt);
  void run_openmp(int threads);
  void run_tbb(int threads);
  std::string verify() const;
  std::uint64_t tasks() const { return 0; }

  // The array being sorted (the tests corrupt it).
  std::span<cilksort::Element> data() { return data_; }

 private:
  std::vector<cilksort::Element> input_;
  std::vector<cilksort::Element> data_;
  std::vector<cilksort::Element> scratch_;
};

}  // namespace bots
