#include "fib.hpp"

namespace bots {
namespace {

std::int64_t fib_sequential(int n) {
  if (n < 2) return n;
  return fib_sequential(n - 1) + fib_sequential(n - 2);
}

// Both calls are children, as BOTS writes it (two tasks, then taskwait); their results live on
// the parent's stack until its sync.
std::int64_t fib_versa(versa::Runtime& rt, int n) {
  if (n < 2) return n;
  std::int64_t x = 0;
  std::int64_t y = 0;
  rt.spawn("fib", [&rt, &x, n] { x = fib_versa(rt, n - 1); });
  rt.spawn("fib", [&rt, &y, n] { y = fib_versa(rt, n - 2); });
  rt.sync();
  return x + y;
}

}  // namespace

Fib::Fib(int n) : n_(n) {
  if (n < 0 || n > 90)
    throw std::invalid_argument("fib: n must be in [0, 90], not " + std::to_string(n));
}

void Fib::run_sequential() { result_ = fib_sequential(n_); }

void Fib::run_versa(versa::Runtime& rt) {
  rt.spawn("fib", [this, &rt] { result_ = fib_versa(rt, n_); });
  rt.sync();
}

std::int64_t fib_iterative(int n) {
  std::int64_t previous = 0;
  std::int64_t current = n > 0 ? 1 : 0;
  for (int i = 2; i <= n; ++i) {
    const std::int64_t next = previous + current;
    previous = current;
    current = next;
  }
  return current;
}

std::uint64_t Fib::tasks() const {
  return 2 * static_cast<std::uint64_t>(fib_iterative(n_ + 1)) - 2;
}

std::string Fib::verify() const {
  const std::int64_t expected = fib_iterative(n_);
  if (result_ == expected) return {};
  return "fib(" + std::to_string(n_) + ") = " + std::to_string(result_) + ", expected " +
         std::to_string(expected);
}

}  // namespace bots
