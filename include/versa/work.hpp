#pragma once

#include <cstddef>

#include "versa/detail/task_glue.hpp"

namespace versa {

// The shapes of a task's data, given to a work hint (TaskType::work): rows, columns and bytes
// of each access, in the order the accesses were given to submit (a token has 0 rows).
//
//   auto gemm = versa::task_type("gemm").cpu(...)
//       .work([](const versa::Shapes& s) { return 2.0 * s.rows(2) * s.cols(2) * s.cols(0); });
class Shapes {
 public:
  Shapes(const detail::AccessRecord* accesses, std::size_t count)
      : accesses_(accesses), count_(count) {}

  std::size_t size() const { return count_; }
  std::size_t rows(std::size_t i) const { return accesses_[i].layout->rows; }
  std::size_t cols(std::size_t i) const { return accesses_[i].layout->cols; }
  std::size_t bytes(std::size_t i) const { return accesses_[i].layout->bytes(); }

 private:
  const detail::AccessRecord* accesses_;
  std::size_t count_;
};

// Task option: how much work the task does, in any unit proportional to its run time (flops,
// or the bytes of its dominant operand). The performance model learns run times per task type,
// device kind and work size; without a hint the size is the bytes of the task's data. Overrides
// the task type's hint (TaskType::work). Costs nothing when the runtime has no accelerator.
struct Work {
  double value;
};
inline Work work(double value) { return {value}; }

}  // namespace versa
