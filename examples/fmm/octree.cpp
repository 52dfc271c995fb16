#include "octree.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "parallel_for.hpp"
#include "radix_sort.hpp"

namespace fmm {

namespace {

// Spreads the low 21 bits of v so that bit i moves to bit 3 i.
std::uint64_t spread_bits(std::uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

}  // namespace

std::uint64_t morton_key(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return spread_bits(x) << 2 | spread_bits(y) << 1 | spread_bits(z);
}

bool cells_touch(const Cell& a, const Cell& b) {
  // Compare in units of the finest level, where both boxes have integer corners.
  const std::uint32_t ca[3] = {a.x, a.y, a.z}, cb[3] = {b.x, b.y, b.z};
  const int sa = max_octree_level - a.level, sb = max_octree_level - b.level;
  for (int d = 0; d < 3; ++d) {
    const std::int64_t a_low = std::int64_t{ca[d]} << sa, a_high = (std::int64_t{ca[d]} + 1) << sa;
    const std::int64_t b_low = std::int64_t{cb[d]} << sb, b_high = (std::int64_t{cb[d]} + 1) << sb;
    if (a_low > b_high || b_low > a_high) return false;
  }
  return true;
}

Octree::Octree(const Points& points, std::size_t leaf_size, int max_level)
    : leaf_size_(leaf_size), max_level_(max_level) {
  const std::size_t n = points.size();
  const std::vector<double>* coordinates[3] = {&points.x, &points.y, &points.z};
  // The bounding box, per chunk in parallel and then over the chunks.
  const std::size_t chunks = example::parallel_chunk_count(n, 1 << 16);
  std::vector<std::array<double, 6>> boxes(chunks);  // low x, y, z, then high x, y, z
  example::parallel_chunks(n, chunks, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
    std::array<double, 6>& box = boxes[chunk];
    for (int d = 0; d < 3; ++d) {
      const auto [low, high] =
          std::minmax_element(coordinates[d]->begin() + begin, coordinates[d]->begin() + end);
      box[d] = begin < end ? *low : std::numeric_limits<double>::infinity();
      box[3 + d] = begin < end ? *high : -std::numeric_limits<double>::infinity();
    }
  });
  double extent = 0;
  for (int d = 0; d < 3; ++d) {
    double low = std::numeric_limits<double>::infinity(), high = -low;
    for (const std::array<double, 6>& box : boxes)
      low = std::min(low, box[d]), high = std::max(high, box[3 + d]);
    origin_[d] = n > 0 ? low : 0;
    extent = n > 0 ? std::max(extent, high - low) : 0;
  }
  // A cube of zero extent (one point, or all coincident) still needs a positive width.
  width_ = extent > 0 ? extent : 1.0;

  const double cells_per_side = static_cast<double>(std::uint64_t{1} << max_octree_level);
  resize_unwritten(point_keys_, n);
  example::parallel_for(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      std::uint32_t q[3];
      for (int d = 0; d < 3; ++d) {
        const double scaled = ((*coordinates[d])[i] - origin_[d]) / width_ * cells_per_side;
        // The points on the upper faces of the cube belong to the last cell.
        q[d] = static_cast<std::uint32_t>(std::clamp(scaled, 0.0, cells_per_side - 1));
      }
      point_keys_[i] = morton_key(q[0], q[1], q[2]);
    }
  });
  // The keys' bits of levels 1 to 11 place every cell of those levels: sorting by them alone
  // takes three radix passes where the whole key takes six. Only the points of a level-11 cell
  // that is split further need the rest of their keys in order, and few cells are that deep.
  constexpr int coarse_level = 11;
  constexpr int coarse_shift = 3 * (max_octree_level - coarse_level);
  original_index_ = stable_sort_keys(point_keys_, coarse_shift);
  if (max_level_ > coarse_level)
    for (std::size_t begin = 0, end = 0; begin < n; begin = end) {
      const std::uint64_t cell = point_keys_[begin] >> coarse_shift;
      for (end = begin + 1; end < n && point_keys_[end] >> coarse_shift == cell;) ++end;
      if (end - begin > leaf_size_) sort_by_whole_key(begin, end);
    }
  for (UninitialisedArray<double>* array : {&sorted_.x, &sorted_.y, &sorted_.z, &sorted_.charge})
    resize_unwritten(*array, n);
  example::parallel_for(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t from = original_index_[i];
      sorted_.x[i] = points.x[from], sorted_.y[i] = points.y[from], sorted_.z[i] = points.z[from];
      sorted_.charge[i] = points.charge[from];
    }
  });

  // Level by level: the children of the cells of level l, appended in the order of their
  // parents and then of their octant, are the cells of level l + 1 in Morton order.
  Cell root;
  root.end = n;
  cells_.push_back(root);
  level_begin_ = {0};
  for (int level = 0;; ++level) {
    const std::size_t first = level_begin_.back(), last = cells_.size();
    level_begin_.push_back(last);
    if (first == last) break;
    for (std::size_t c = first; c < last; ++c) {
      if (cells_[c].count() <= leaf_size_ || level >= max_level_) continue;
      const Cell parent = cells_[c];
      const int child_shift = 3 * (max_octree_level - level - 1);
      cells_[c].first_child = static_cast<std::int32_t>(cells_.size());
      std::size_t begin = parent.begin;
      while (begin < parent.end) {
        // The points of one child share the Morton prefix down to the child's level.
        const std::uint64_t prefix = point_keys_[begin] >> child_shift;
        const std::size_t end = static_cast<std::size_t>(
            std::upper_bound(
                point_keys_.begin() + begin, point_keys_.begin() + parent.end, prefix,
                [&](std::uint64_t p, std::uint64_t key) { return p < (key >> child_shift); }) -
            point_keys_.begin());
        Cell child;
        child.level = level + 1;
        const unsigned octant = prefix & 7;
        child.x = parent.x * 2 + (octant >> 2 & 1);
        child.y = parent.y * 2 + (octant >> 1 & 1);
        child.z = parent.z * 2 + (octant & 1);
        child.key = prefix;
        child.begin = begin;
        child.end = end;
        child.parent = static_cast<std::int32_t>(c);
        cells_.push_back(child);
        ++cells_[c].child_count;
        begin = end;
      }
    }
  }
  level_begin_.pop_back();  // the last level pushed was empty: keep one end marker
}

void Octree::sort_by_whole_key(std::size_t begin, std::size_t end) {
  std::vector<std::pair<std::uint64_t, std::size_t>> run;
  run.reserve(end - begin);
  for (std::size_t i = begin; i < end; ++i) run.emplace_back(point_keys_[i], original_index_[i]);
  std::stable_sort(run.begin(), run.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = begin; i < end; ++i)
    std::tie(point_keys_[i], original_index_[i]) = run[i - begin];
}

std::int32_t Octree::find(int level, std::int64_t x, std::int64_t y, std::int64_t z) const {
  const std::int64_t side = std::int64_t{1} << level;
  if (level >= levels() || x < 0 || y < 0 || z < 0 || x >= side || y >= side || z >= side)
    return -1;
  const std::uint64_t key = morton_key(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y),
                                       static_cast<std::uint32_t>(z));
  const auto first = cells_.begin() + static_cast<std::ptrdiff_t>(level_begin_[level]);
  const auto last = cells_.begin() + static_cast<std::ptrdiff_t>(level_begin_[level + 1]);
  const auto found =
      std::lower_bound(first, last, key, [](const Cell& c, std::uint64_t k) { return c.key < k; });
  if (found == last || found->key != key) return -1;
  return static_cast<std::int32_t>(found - cells_.begin());
}

double Octree::width(int level) const { return std::ldexp(width_, -level); }

void Octree::center(const Cell& cell, double& cx, double& cy, double& cz) const {
  const double w = width(cell.level);
  cx = origin_[0] + (cell.x + 0.5) * w;
  cy = origin_[1] + (cell.y + 0.5) * w;
  cz = origin_[2] + (cell.z + 0.5) * w;
}

}  // namespace fmm
