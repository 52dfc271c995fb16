// The vectorised near field (examples/fmm/p2p.hpp) against the scalar reference, on every
// instruction set this CPU runs that the kernels are compiled for.
#include "p2p.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace {

// A leaf's points and results, owned. The results start at nonzero values, so that a kernel
// that overwrites instead of adding is caught.
struct Leaf {
  std::vector<double> x, y, z, charge;
  std::vector<double> potential, gx, gy, gz;

  Leaf(std::size_t n, unsigned seed) : x(n), y(n), z(n), charge(n) {
    std::mt19937_64 random(seed);
    std::uniform_real_distribution<double> u(0, 1), q(-1, 1);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = u(random);
      y[i] = u(random);
      z[i] = u(random);
      charge[i] = q(random);
    }
    clear_results(seed);
  }

  void clear_results(unsigned seed) {
    const std::size_t n = x.size();
    potential.assign(n, 0.5 + seed);
    gx.assign(n, -0.25);
    gy.assign(n, 0.125);
    gz.assign(n, 1.0);
  }

  fmm::LeafPoints points() const { return {x.data(), y.data(), z.data(), charge.data(), x.size()}; }
  fmm::LeafResults results() { return {potential.data(), gx.data(), gy.data(), gz.data()}; }
};

// The largest difference between two arrays relative to the largest value of `expected`: the
// field's components cancel to near 0 at some points, where an elementwise ratio means nothing.
double relative_difference(const std::vector<double>& actual, const std::vector<double>& expected) {
  double difference = 0, scale = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    difference = std::max(difference, std::abs(actual[i] - expected[i]));
    scale = std::max(scale, std::abs(expected[i]));
  }
  return scale > 0 ? difference / scale : difference;
}

void expect_same_results(const Leaf& actual, const Leaf& expected, double tolerance) {
  EXPECT_LE(relative_difference(actual.potential, expected.potential), tolerance);
  EXPECT_LE(relative_difference(actual.gx, expected.gx), tolerance);
  EXPECT_LE(relative_difference(actual.gy, expected.gy), tolerance);
  EXPECT_LE(relative_difference(actual.gz, expected.gz), tolerance);
}

constexpr double tolerance = 1e-13;
// Sizes around and between the vector widths (2, 4 and 8 doubles), and a default leaf.
constexpr std::size_t sizes[] = {1, 2, 3, 5, 8, 17, 64, 100};

// Runs `check` once with the kernels restricted to each instruction set this CPU runs, then
// lifts the restriction.
template <class Check>
void for_each_target(Check check) {
  for (std::int64_t target : fmm::p2p_supported_targets()) {
    SCOPED_TRACE(fmm::p2p_target_name(target));
    fmm::p2p_restrict_to_target(target);
    check();
  }
  fmm::p2p_restrict_to_target(0);
}

TEST(FmmP2P, SelfEqualsTheReference) {
  for_each_target([] {
    for (std::size_t n : sizes) {
      SCOPED_TRACE(n);
      Leaf vectorised(n, 1), reference(n, 1);
      fmm::p2p_self(vectorised.points(), vectorised.results());
      fmm::p2p_reference(reference.points(), reference.results(), reference.points());
      expect_same_results(vectorised, reference, tolerance);
    }
  });
}

TEST(FmmP2P, MutualEqualsTwoOneSidedSums) {
  for_each_target([] {
    for (std::size_t na : sizes) {
      for (std::size_t nb : sizes) {
        SCOPED_TRACE(testing::Message() << na << " x " << nb);
        Leaf a(na, 2), b(nb, 3), a_reference(na, 2), b_reference(nb, 3);
        fmm::p2p_mutual(a.points(), a.results(), b.points(), b.results());
        fmm::p2p_reference(a_reference.points(), a_reference.results(), b_reference.points());
        fmm::p2p_reference(b_reference.points(), b_reference.results(), a_reference.points());
        expect_same_results(a, a_reference, tolerance);
        expect_same_results(b, b_reference, tolerance);
      }
    }
  });
}

// Coincident points contribute nothing to each other, inside a leaf and across two, and
// nothing turns into NaN or infinity.
TEST(FmmP2P, CoincidentPointsContributeNothing) {
  for_each_target([] {
    Leaf a(19, 4), b(11, 5);
    for (std::size_t i = 0; i < 6; ++i) {  // a's points 0..5 all at one place, b's 0 and 3 too
      a.x[i] = 0.25;
      a.y[i] = 0.5;
      a.z[i] = 0.75;
    }
    for (std::size_t i : {0, 3}) {
      b.x[i] = a.x[0];
      b.y[i] = a.y[0];
      b.z[i] = a.z[0];
    }
    Leaf a_reference = a, b_reference = b;
    fmm::p2p_self(a.points(), a.results());
    fmm::p2p_mutual(a.points(), a.results(), b.points(), b.results());
    fmm::p2p_reference(a_reference.points(), a_reference.results(), a_reference.points());
    fmm::p2p_reference(a_reference.points(), a_reference.results(), b_reference.points());
    fmm::p2p_reference(b_reference.points(), b_reference.results(), a_reference.points());
    for (const Leaf* leaf : {&a, &b})
      for (const std::vector<double>* values : {&leaf->potential, &leaf->gx, &leaf->gy, &leaf->gz})
        for (double v : *values) EXPECT_TRUE(std::isfinite(v));
    expect_same_results(a, a_reference, tolerance);
    expect_same_results(b, b_reference, tolerance);
  });
}

// The refined single-precision estimate of 1/r is as good as the double division: one unit
// charge against 1000 points at distances from 1e-20 to 1e20 (beyond float's range at both
// ends), each of which receives 1/r.
TEST(FmmP2P, InverseDistanceIsDoublePrecision) {
  for_each_target([] {
    const std::size_t n = 1000;
    Leaf one(1, 6), many(n, 7);
    one.x[0] = one.y[0] = one.z[0] = 0;
    one.charge[0] = 1;
    std::mt19937_64 random(8);
    std::uniform_real_distribution<double> exponent(-20, 20), direction(-1, 1);
    std::vector<long double> exact(n);
    for (std::size_t j = 0; j < n; ++j) {
      const double r = std::pow(10.0, exponent(random));
      const double ux = direction(random), uy = direction(random), uz = direction(random);
      const double norm = std::sqrt(ux * ux + uy * uy + uz * uz);
      many.x[j] = r * ux / norm;
      many.y[j] = r * uy / norm;
      many.z[j] = r * uz / norm;
      const long double lx = many.x[j], ly = many.y[j], lz = many.z[j];
      exact[j] = 1 / std::sqrt(lx * lx + ly * ly + lz * lz);
    }
    std::fill(many.potential.begin(), many.potential.end(), 0.0);
    fmm::p2p_mutual(one.points(), one.results(), many.points(), many.results());
    double worst = 0;
    for (std::size_t j = 0; j < n; ++j)
      worst =
          std::max(worst, static_cast<double>(std::abs(many.potential[j] - exact[j]) / exact[j]));
    EXPECT_LE(worst, 1e-15);
  });
}

// The measurement behind docs/fmm.md's near-field figures: pairs per second of one thread, for
// each instruction set, on two leaves of 64 and of 256 points (the default leaf size) and on
// one leaf with itself, and of the scalar reference (one-sided, so each pair costs it two
// evaluations). Run on demand:
//   versa_tests --gtest_also_run_disabled_tests --gtest_filter='FmmP2PMeasure*'
TEST(FmmP2PMeasure, DISABLED_PairsPerSecond) {
  auto pairs_per_second = [](double pairs, auto kernel) {
    const int calls = static_cast<int>(2e7 / pairs) + 1;
    double best = 0;
    for (int round = 0; round < 5; ++round) {
      const auto start = std::chrono::steady_clock::now();
      for (int call = 0; call < calls; ++call) kernel();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      best = std::max(best, pairs * calls / seconds);
    }
    return best;
  };
  for (std::size_t n : {32, 64, 256}) {
    Leaf a(n, 9), b(n, 10);
    const double pairs = double(n) * double(n), self_pairs = double(n) * double(n - 1) / 2;
    for (std::int64_t target : fmm::p2p_supported_targets()) {
      fmm::p2p_restrict_to_target(target);
      const double mutual = pairs_per_second(
          pairs, [&] { fmm::p2p_mutual(a.points(), a.results(), b.points(), b.results()); });
      const double self =
          pairs_per_second(self_pairs, [&] { fmm::p2p_self(a.points(), a.results()); });
      std::printf("leaf %3zu  %-8s mutual %.3g  self %.3g pairs/s\n", n,
                  fmm::p2p_target_name(target), mutual, self);
    }
    fmm::p2p_restrict_to_target(0);
    const double reference = pairs_per_second(pairs, [&] {
      fmm::p2p_reference(a.points(), a.results(), b.points());
      fmm::p2p_reference(b.points(), b.results(), a.points());
    });
    std::printf("leaf %3zu  %-8s mutual %.3g pairs/s\n", n, "scalar", reference);
  }
}

}  // namespace
