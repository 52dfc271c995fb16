#include "fft.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>

namespace bots {
namespace cilkfft {
namespace {

// The suite's choice of radix: 8 for the sizes where its authors found 8 faster, else the
// largest of 16, 8, 4 and 2 that divides n.
int radix_for(std::size_t n) {
  switch (n) {
    case 64:
    case 128:
    case 256:
    case 1024:
    case 2048:
    case 4096:
      return 8;
    default:
      break;
  }
  if (n % 16 == 0) return 16;
  if (n % 8 == 0) return 8;
  if (n % 4 == 0) return 4;
  return 2;
}

template <int R>
constexpr std::array<int, R> bit_reversed_order() {
  std::array<int, R> order{};
  for (int j = 0; j < R; ++j) {
    int reversed = 0;
    for (int bit = 1, mirror = R / 2; bit < R; bit <<= 1, mirror >>= 1)
      if (j & bit) reversed |= mirror;
    order[j] = reversed;
  }
  return order;
}

// exp(-2 pi i k / R) for k < R / 2, read from the transform's table.
template <int R>
std::array<Complex, R / 2> roots_of_unity(const Complex* w, std::size_t w_points) {
  std::array<Complex, R / 2> roots;
  const std::size_t stride = w_points / R;
  for (int k = 0; k < R / 2; ++k) roots[k] = w[static_cast<std::size_t>(k) * stride];
  return roots;
}

// The R-point DFT, in place, of points stored in bit-reversed order (radix-2 decimation in
// time). R is a constant, so that the compiler unrolls the network as the suite's generated
// code is unrolled.
template <int R>
void butterflies(std::array<Complex, R>& x, const std::array<Complex, R / 2>& roots) {
  for (int length = 2; length <= R; length *= 2) {
    const int half = length / 2;
    const int stride = R / length;
    for (int start = 0; start < R; start += length)
      for (int k = 0; k < half; ++k) {
        const Complex twiddled = roots[k * stride] * x[start + k + half];
        const Complex kept = x[start + k];
        x[start + k] = kept + twiddled;
        x[start + k + half] = kept - twiddled;
      }
  }
}

template <int R>
void base_transform_of(const Step& step) {
  static constexpr std::array<int, R> order = bit_reversed_order<R>();
  std::array<Complex, R> x;
  for (int j = 0; j < R; ++j) x[order[j]] = step.in[j];
  butterflies<R>(x, roots_of_unity<R>(step.w, step.w_points));
  for (int k = 0; k < R; ++k) step.out[k] = x[k];
}

template <int R>
void twiddle_of(const Step& step, std::size_t begin, std::size_t end) {
  static constexpr std::array<int, R> order = bit_reversed_order<R>();
  const std::array<Complex, R / 2> roots = roots_of_unity<R>(step.w, step.w_points);
  const std::size_t m = step.m();
  const std::size_t w_stride = step.w_points / step.n;
  for (std::size_t i = begin; i < end; ++i) {
    std::array<Complex, R> x;
    const std::size_t w_step = w_stride * i;
    for (int j = 0; j < R; ++j) {
      const auto row = static_cast<std::size_t>(j);
      x[order[j]] = step.w[row * w_step] * step.in[row * m + i];
    }
    butterflies<R>(x, roots);
    for (int k = 0; k < R; ++k) step.out[static_cast<std::size_t>(k) * m + i] = x[k];
  }
}

[[noreturn]] void unsupported(const char* what, std::size_t size) {
  throw std::logic_error(std::string("fft: no ") + what + " for " + std::to_string(size) +
                         " points");
}

}  // namespace

std::vector<int> radices(std::size_t n) {
  std::vector<int> list;
  while (n > 1) {
    list.push_back(radix_for(n));
    n /= static_cast<std::size_t>(list.back());
  }
  return list;
}

void fill_twiddles(const TwiddleTable& table, std::size_t begin, std::size_t end) {
  const double angle = 2 * std::numbers::pi / static_cast<double>(table.n);
  for (std::size_t k = begin; k < end; ++k) {
    const double c = std::cos(angle * static_cast<double>(k));
    const double s = std::sin(angle * static_cast<double>(k));
    table.w[k] = {c, -s};
    table.w[table.n - k] = {c, s};
  }
}

void base_transform(const Step& step) {
  switch (step.n) {
    case 2:
      return base_transform_of<2>(step);
    case 4:
      return base_transform_of<4>(step);
    case 8:
      return base_transform_of<8>(step);
    case 16:
      return base_transform_of<16>(step);
    case 32:
      return base_transform_of<32>(step);
    default:
      unsupported("base transform", step.n);
  }
}

void unshuffle(const Step& step, std::size_t begin, std::size_t end) {
  const auto r = static_cast<std::size_t>(step.radix());
  const std::size_t m = step.m();
  for (std::size_t i = begin; i < end; ++i)
    for (std::size_t j = 0; j < r; ++j) step.out[j * m + i] = step.in[i * r + j];
}

void twiddle(const Step& step, std::size_t begin, std::size_t end) {
  switch (step.radix()) {
    case 2:
      return twiddle_of<2>(step, begin, end);
    case 4:
      return twiddle_of<4>(step, begin, end);
    case 8:
      return twiddle_of<8>(step, begin, end);
    case 16:
      return twiddle_of<16>(step, begin, end);
    default:
      unsupported("radix", static_cast<std::size_t>(step.radix()));
  }
}

}  // namespace cilkfft

namespace {

using cilkfft::Complex;
using cilkfft::Step;

template <class Leaf>
void split_sequential(const Leaf& leaf, std::size_t begin, std::size_t end) {
  if (end - begin < cilkfft::leaf_below) {
    leaf(begin, end);
    return;
  }
  const std::size_t middle = begin + (end - begin) / 2;
  split_sequential(leaf, begin, middle);
  split_sequential(leaf, middle, end);
}

void fft_sequential(const Step& step) {
  if (step.is_base()) {
    cilkfft::base_transform(step);
    return;
  }
  split_sequential([&step](std::size_t b, std::size_t e) { cilkfft::unshuffle(step, b, e); }, 0,
                   step.m());
  for (int k = 0; k < step.radix(); ++k) fft_sequential(step.sub(k));
  split_sequential([&step](std::size_t b, std::size_t e) { cilkfft::twiddle(step, b, e); }, 0,
                   step.m());
}

// A range's leaf and the name its tasks run under: one object on the spawning task's stack, so
// that a range task's closure is a reference and two bounds.
template <class Leaf>
struct RangeWork {
  const char* name;
  Leaf leaf;
};
template <class Leaf>
RangeWork<Leaf> range_work(const char* name, Leaf leaf) {
  return {name, leaf};
}

template <class Leaf>
void split_versa(versa::Runtime& rt, const RangeWork<Leaf>& work, std::size_t begin,
                 std::size_t end) {
  if (end - begin < cilkfft::leaf_below) {
    work.leaf(begin, end);
    return;
  }
  const std::size_t middle = begin + (end - begin) / 2;
  rt.spawn(work.name, [&rt, &work, begin, middle] { split_versa(rt, work, begin, middle); });
  rt.spawn(work.name, [&rt, &work, middle, end] { split_versa(rt, work, middle, end); });
  rt.sync();
}

// As the suite: one task for the unshuffle, one per sub-transform, one for the twiddle step, each
// group awaited before the next.
void fft_versa(versa::Runtime& rt, const Step& step) {
  if (step.is_base()) {
    cilkfft::base_transform(step);
    return;
  }
  const std::size_t m = step.m();
  const auto unshuffle = range_work(
      "fft unshuffle", [&step](std::size_t b, std::size_t e) { cilkfft::unshuffle(step, b, e); });
  rt.spawn("fft unshuffle", [&rt, &unshuffle, m] { split_versa(rt, unshuffle, 0, m); });
  rt.sync();
  for (int k = 0; k < step.radix(); ++k)
    rt.spawn("fft", [&rt, &step, k] { fft_versa(rt, step.sub(k)); });
  rt.sync();
  const auto twiddle = range_work(
      "fft twiddle", [&step](std::size_t b, std::size_t e) { cilkfft::twiddle(step, b, e); });
  rt.spawn("fft twiddle", [&rt, &twiddle, m] { split_versa(rt, twiddle, 0, m); });
  rt.sync();
}

// A fixed hash of the index (splitmix64's finaliser) mapped to [-1, 1).
double input_part(std::uint64_t index) {
  std::uint64_t x = index + 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0;
}

double magnitude(Complex x) { return std::hypot(x.re, x.im); }

std::string format(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

}  // namespace

Fft::Fft(std::size_t n) : n_(n) {
  if (n < 2 || (n & (n - 1)) != 0)
    throw std::invalid_argument("fft: n must be a power of two >= 2, not " + std::to_string(n));
  radices_ = cilkfft::radices(n);
  in_.resize(n);
  out_.resize(n);
  twiddles_.resize(n + 1);
  reset();
  run_sequential();
  reference_ = out_;

  // X[k] = sum_j x[j] w[j k mod n], on the regenerated input, with the run's table.
  fill_input();
  double energy = 0;
  for (const Complex& x : in_) energy += x.re * x.re + x.im * x.im;
  input_norm_ = std::sqrt(energy);
  for (const std::size_t k : {std::size_t{0}, std::size_t{1}, n / 3, n / 2, n - 1}) {
    Complex sum{0, 0};
    std::size_t w_index = 0;
    for (std::size_t j = 0; j < n; ++j) {
      sum = sum + in_[j] * twiddles_[w_index];
      w_index += k;
      if (w_index >= n) w_index -= n;
    }
    plain_dft_.push_back({k, sum});
  }
  reset();
}

void Fft::fill_input() {
  for (std::size_t j = 0; j < n_; ++j) in_[j] = {input_part(2 * j), input_part(2 * j + 1)};
}

// The output and the table too, so that a run that skips a part fails its verification.
void Fft::reset() {
  fill_input();
  std::fill(out_.begin(), out_.end(), Complex{0, 0});
  std::fill(twiddles_.begin(), twiddles_.end(), Complex{0, 0});
}

void Fft::run_sequential() {
  split_sequential([table = twiddle_table()](
                       std::size_t b, std::size_t e) { cilkfft::fill_twiddles(table, b, e); },
                   0, n_ / 2 + 1);
  fft_sequential(top_step());
}

void Fft::run_versa(versa::Runtime& rt) {
  rt.spawn("fft", [this, &rt] {
    const cilkfft::TwiddleTable table = twiddle_table();
    const auto fill = range_work("fft twiddle table", [&table](std::size_t b, std::size_t e) {
      cilkfft::fill_twiddles(table, b, e);
    });
    split_versa(rt, fill, 0, n_ / 2 + 1);
    fft_versa(rt, top_step());
  });
  rt.sync();
}

std::string Fft::verify() const {
  // The suite's check: the largest error relative to the reference's magnitude (absolute where
  // that is below 1e-10). Written so that a NaN fails.
  double worst = 0;
  std::size_t worst_index = 0;
  for (std::size_t i = 0; i < n_; ++i) {
    const double error = magnitude(out_[i] - reference_[i]);
    const double scale = magnitude(reference_[i]);
    const double relative = scale > 1e-10 ? error / scale : error;
    if (!(relative <= worst)) {
      worst = relative;
      worst_index = i;
      if (std::isnan(relative)) break;
    }
  }
  if (!(worst <= 1e-3))
    return "fft: output " + std::to_string(worst_index) + " has relative error " + format(worst) +
           " against the sequential run (at most 1e-3)";
  for (const SpotValue& spot : plain_dft_) {
    const double error = magnitude(out_[spot.index] - spot.value);
    if (!(error <= 1e-9 * input_norm_))
      return "fft: output " + std::to_string(spot.index) + " differs from the plain DFT by " +
             format(error) + " (at most 1e-9 of the input's norm, " + format(input_norm_) + ")";
  }
  return {};
}

}  // namespace bots
