// fib(n) by the doubly recursive definition, with a task per call and no cut-off (BOTS fib): the
// work per task is a few additions, so the time measures what a task costs.
#pragma once

#include <cstdint>
#include <string>

#include "kernel.hpp"
#include "versa/versa.hpp"

namespace bots {

class Fib {
 public:
  static constexpr const char* name = "fib";

  explicit Fib(Scale scale) : Fib(scale == Scale::bench ? 32 : 20) {}
  explicit Fib(int n);

  std::string input() const { return "n=" + std::to_string(n_); }
  void reset() { result_ = -1; }
  void run_sequential();
  void run_versa(versa::Runtime& rt);
  void run_openmp(int threads);
  void run_tbb(int threads);
  std::string verify() const;
  // Every call but the first is a task: 2 fib(n+1) - 2.
  std::uint64_t tasks() const;

  std::int64_t result() const { return result_; }

 private:
  int n_;
  std::int64_t result_ = -1;
};

// fib(n) by iteration: the verification's reference.
std::int64_t fib_iterative(int n);

}  // namespace bots
