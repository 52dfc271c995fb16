#include "m2l_batches.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fmm {

M2LBatches M2LBatches::of(const std::int32_t* work, std::size_t work_size, const double* operators,
                          int r) {
  M2LBatches plan;
  if (work_size < 1) return plan;
  plan.level = work[0];
  plan.entries = (work_size - 1) / 3;
  const std::int32_t* entries = work + 1;
  for (std::size_t first = 0; first < plan.entries;) {
    const std::int32_t offset = entries[3 * first];
    std::size_t end = first + 1;
    while (end < plan.entries && entries[3 * end] == offset) ++end;
    const steps::M2LOperator op = steps::m2l_operator(operators, offset);
    if (op.rank < 1 || op.rank > r)
      throw std::logic_error("m2l work list: offset " + std::to_string(offset) +
                             " has no far-field operator (rank " + std::to_string(op.rank) + ")");
    plan.runs.push_back({static_cast<std::int32_t>(first), static_cast<std::int32_t>(end - first),
                         op.rank, static_cast<std::int32_t>(op.values - operators), 0});
    first = end;
  }
  std::sort(plan.runs.begin(), plan.runs.end(),
            [r](const steps::M2LRun& a, const steps::M2LRun& b) {
              const bool a_truncated = a.k < r, b_truncated = b.k < r;
              if (a_truncated != b_truncated) return a_truncated;
              if (a.k != b.k) return a.k < b.k;
              if (a.count != b.count) return a.count < b.count;
              return a.first < b.first;
            });
  for (steps::M2LRun& run : plan.runs) {
    if (run.k == r) break;
    if (plan.projections > static_cast<std::size_t>(INT32_MAX))
      throw std::length_error("m2l work list: too many entries for one task's products");
    run.y = static_cast<std::int32_t>(plan.projections);
    plan.projections += static_cast<std::size_t>(run.k) * static_cast<std::size_t>(run.count);
    ++plan.truncated;
  }
  return plan;
}

std::vector<int> M2LBatches::group_sizes(int pass) const {
  const std::size_t n = pass == 0 ? static_cast<std::size_t>(truncated) : runs.size();
  std::vector<int> sizes;
  for (std::size_t i = 0; i < n; ++i) {
    const bool same = i > 0 && runs[i].k == runs[i - 1].k && runs[i].count == runs[i - 1].count;
    if (same)
      ++sizes.back();
    else
      sizes.push_back(1);
  }
  return sizes;
}

}  // namespace fmm
