// BOTS fft: Frigo's recursive Cooley-Tukey FFT from Cilk. An n-point transform picks a radix r
// (16 or 8 for powers of two, by the suite's rule), unshuffles the input into r interleaved
// sequences of m = n / r points (a task that splits its range in halves down to 128 points), runs
// the r sub-transforms as tasks, then combines them with twiddle factors and r-point transforms
// (again a range task split down to 128 points). Transforms of 32 points or fewer are done
// directly. The table of twiddle factors exp(-2 pi i k / n) is computed in the timed run too, by
// range tasks down to 128 entries, as in the suite.
//
// The suite's small transforms are machine-generated straight-line code; ours are one radix-2
// butterfly network per radix, unrolled by the compiler from a template: the same arithmetic
// structure, not the suite's exact code.
//
// Input: n pseudo-random complex points with parts in [-1, 1) (a fixed hash of the index, so
// that reset() regenerates them), where the suite uses 1 + 1i everywhere: with every point
// different, a wrong butterfly cannot hide. Verification: the suite's relative error (at most
// 1e-3 in every output) against the sequential run, made once in the constructor, and a plain
// DFT of a few outputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernel.hpp"
#include "versa/versa.hpp"

namespace bots {

// The recursive FFT's pieces, shared by the recursions of every system.
namespace cilkfft {

struct Complex {
  double re;
  double im;
};

inline Complex operator+(Complex x, Complex y) { return {x.re + y.re, x.im + y.im}; }
inline Complex operator-(Complex x, Complex y) { return {x.re - y.re, x.im - y.im}; }
inline Complex operator*(Complex x, Complex y) {
  return {x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re};
}

// The suite's cut-offs: ranges of unshuffling, twiddling or twiddle-table entries shorter than
// this are one loop; transforms of up to base_points points are done directly.
inline constexpr std::size_t leaf_below = 128;
inline constexpr std::size_t base_points = 32;

// The radices an n-point transform is split by, outermost first (n a power of two >= 2). The
// last entries, below base_points, go unused.
std::vector<int> radices(std::size_t n);

// The table w[k] = exp(-2 pi i k / n), k in [0, n]: n + 1 entries.
struct TwiddleTable {
  Complex* w;
  std::size_t n;
};
// Fills w[k] and w[n - k] for k in [begin, end), a subrange of [0, n / 2 + 1).
void fill_twiddles(const TwiddleTable& table, std::size_t begin, std::size_t end);

// One level of the recursion: the n points at `in` are unshuffled into `out`, the radix()
// sub-transforms of m() points each run from `out` back into `in` (in is scratch), and the twiddle
// step combines them into `out`.
struct Step {
  Complex* in;
  Complex* out;
  std::size_t n;
  const int* radix_list;  // radix_list[0] splits this level
  const Complex* w;       // the whole transform's twiddle table
  std::size_t w_points;   // the whole transform's size

  bool is_base() const { return n <= base_points; }
  int radix() const { return radix_list[0]; }
  std::size_t m() const { return n / static_cast<std::size_t>(radix_list[0]); }
  // The k-th sub-transform: out[k m, (k + 1) m) into in[k m, (k + 1) m).
  Step sub(int k) const {
    const std::size_t offset = static_cast<std::size_t>(k) * m();
    return {out + offset, in + offset, m(), radix_list + 1, w, w_points};
  }
};

// The transform of a base step (n <= base_points), from in to out.
[[gnu::noinline, gnu::aligned(64)]] void base_transform(const Step& step);
// out[j m + i] = in[i r + j] for i in [begin, end) and j < r: sequence j of the input, the points
// congruent to j modulo r, becomes the input of sub-transform j.
[[gnu::noinline, gnu::aligned(64)]] void unshuffle(const Step& step, std::size_t begin,
                                                   std::size_t end);
// For i in [begin, end): multiplies the i-th output of every sub-transform (in[j m + i]) by its
// twiddle factor and transforms those r points into out[k m + i].
[[gnu::noinline, gnu::aligned(64)]] void twiddle(const Step& step, std::size_t begin,
                                                 std::size_t end);

}  // namespace cilkfft

class Fft {
 public:
  static constexpr const char* name = "fft";

  explicit Fft(Scale scale) : Fft(std::size_t{1} << (scale == Scale::bench ? 24 : 18)) {}
  // n a power of two, at least 2.
  explicit Fft(std::size_t n);

  std::string input() const { return "n=" + std::to_string(n_); }
  void reset();
  void run_sequential();
  void run_versa(versa::Runtime& rt);
  void run_openmp(int threads);
  void run_tbb(int threads);
  std::string verify() const;
  std::uint64_t tasks() const { return 0; }

  // The transform's output (the tests corrupt it).
  std::span<cilkfft::Complex> output() { return out_; }

 private:
  cilkfft::Step top_step() {
    return {in_.data(), out_.data(), n_, radices_.data(), twiddles_.data(), n_};
  }
  cilkfft::TwiddleTable twiddle_table() { return {twiddles_.data(), n_}; }
  void fill_input();

  struct SpotValue {
    std::size_t index;
    cilkfft::Complex value;
  };

  std::size_t n_;
  std::vector<int> radices_;
  std::vector<cilkfft::Complex> in_;
  std::vector<cilkfft::Complex> out_;
  std::vector<cilkfft::Complex> twiddles_;
  std::vector<cilkfft::Complex> reference_;  // the sequential run's output
  std::vector<SpotValue> plain_dft_;         // a few outputs by the DFT's definition
  double input_norm_ = 0;                    // sqrt(sum |x_j|^2), the scale of the outputs
};

}  // namespace bots
