// A program that uses an installed or embedded Versa the way a user's does: the umbrella header,
// a runtime, tasks on handles. Exits non-zero on a wrong answer, so a consumer build that links
// but miscompiles (headers and library built with different settings) fails too.
#include <cstdio>
#include <vector>
#include <versa/versa.hpp>

int main() {
  versa::Config config;
  config.cpu_workers = 2;
  config.pin_workers = false;  // the test may share the machine
  versa::Runtime rt(config);

  constexpr std::size_t n = 1000;
  std::vector<double> x(n, 1.0), y(n, 0.0);
  auto hx = rt.data(x, "x");
  auto hy = rt.data(y, "y");

  // y = 2x, then y += x three times, then y *= 0.5: each task depends on the one before it on y.
  auto axpy = versa::task_type("axpy").cpu([](versa::Span<const double> a, versa::Span<double> b) {
    for (std::size_t i = 0; i < b.size(); ++i) b[i] += a[i];
  });
  rt.submit(
      "double",
      [](versa::Span<const double> a, versa::Span<double> b) {
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = 2.0 * a[i];
      },
      versa::read(hx), versa::write_only(hy));
  for (int k = 0; k < 3; ++k) rt.submit(axpy, versa::read(hx), versa::write(hy));
  rt.submit(
      "halve",
      [](versa::Span<double> v) {
        for (double& e : v) e *= 0.5;
      },
      versa::write(hy));
  rt.wait_all();

  int wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += y[i] != 2.5;
  if (wrong != 0) {
    std::fprintf(stderr, "versa consumer: %d of %zu values wrong (y[0] = %g, expected 2.5)\n",
                 wrong, n, y[0]);
    return 1;
  }
  std::printf("versa consumer: ok (%zu values, CUDA backend %d)\n", n, VERSA_HAVE_CUDA);
  return 0;
}
