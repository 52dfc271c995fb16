// Command-line tool: the serial FMM of fmm.hpp on N points of a chosen distribution, reporting
// the time per evaluation and of each pass and, with --check, the relative error of the potential
// and the field against the direct sum at sampled targets.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "accuracy.hpp"
#include "command_line.hpp"
#include "distributions.hpp"
#include "fmm.hpp"
#include "point_files.hpp"

namespace {

struct Options {
  long n = 100000;
  fmm::Distribution distribution = fmm::Distribution::uniform;
  double eps = 1e-6;
  long leaf = 64;
  int steps = 1;
  int repeat = 1;
  bool check = false;
  std::uint64_t seed = 1;
  std::string save_points;     // where to write the points evaluated last, if anywhere
  std::string save_reference;  // where to write the check's targets and direct sum, if anywhere
};

// Up to this N, --check compares every point; above, this many sampled targets.
constexpr std::size_t exact_check_limit = 20000;
constexpr std::size_t check_samples = 1000;

// CLI::Range would print its bounds as 0.000000 and 0.001000.
CLI::Validator eps_range() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return "expects a number, not '" + text + "'";
        // Written so that a NaN is refused.
        if (!(value >= 1e-10 && value <= 1e-3)) return "must be in [1e-10, 1e-3], not " + text;
        return {};
      },
      "");
}

// The files a peer FMM reads to evaluate the same points against the same reference
// (point_files.hpp; bench/fmm uses them).
void add_file_options(CLI::App& app, Options& o) {
  app.add_option("--save-points", o.save_points,
                 "write the points of the last step to FILE (point_files.hpp), once the\n"
                 "run and its check, if any, have passed")
      ->type_name("FILE");
  app.add_option("--save-reference", o.save_reference,
                 "write the check's targets and its direct sum there to FILE, once the\n"
                 "check has passed")
      ->type_name("FILE")
      ->needs("--check");
}

void add_options(CLI::App& app, Options& o) {
  example::use_tool_rules(app);
  app.add_option("--n", o.n, "number of points")
      ->type_name("N")
      ->transform(example::positive<long>())
      ->capture_default_str();
  example::add_parsed_option(app, "--dist", o.distribution, fmm::parse_distribution,
                             "point distribution: uniform (default; the unit cube), blobs (8\n"
                             "Gaussian blobs of widths 1e-3 to 3e-2) or sphere (its surface)")
      ->type_name("D");
  app.add_option("--eps", o.eps, "relative L2 error of the potential asked for")
      ->type_name("EPS")
      ->check(eps_range())
      ->capture_default_str();
  app.add_option("--leaf", o.leaf, "most points in a leaf cell")
      ->type_name("L")
      ->transform(example::positive<long>())
      ->capture_default_str();
  app.add_option("--steps", o.steps,
                 "evaluate K times with one solver, moving the points a little in between")
      ->type_name("K")
      ->transform(example::positive<int>())
      ->capture_default_str();
  app.add_option("--repeat", o.repeat, "evaluate R times per step and report the median time")
      ->type_name("R")
      ->transform(example::positive<int>())
      ->capture_default_str();
  app.add_flag("--check", o.check,
               "compare the last evaluation with the direct sum (all points up to\n"
               "N = 20000, else 1000 sampled targets) and say whether the potential's\n"
               "error is at most eps and the field's at most 10 eps");
  app.add_option("--seed", o.seed, "seed of the point generator")
      ->type_name("S")
      ->capture_default_str();
  add_file_options(app, o);
}

// One step of a smooth, deterministic flow: each coordinate moves by at most 1e-3 as a sine of
// another, which changes the tree from step to step without changing the distribution much.
void move_points(fmm::Points& points) {
  constexpr double amplitude = 1e-3;
  constexpr double k = 2 * std::numbers::pi;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double x = points.x[i], y = points.y[i], z = points.z[i];
    points.x[i] = x + amplitude * std::sin(k * z);
    points.y[i] = y + amplitude * std::sin(k * x);
    points.z[i] = z + amplitude * std::sin(k * y);
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int run(const Options& o) {
  const auto n = static_cast<std::size_t>(o.n);
  auto start = std::chrono::steady_clock::now();
  const fmm::Solver solver({.eps = o.eps, .leaf_size = static_cast<std::size_t>(o.leaf)});
  const double setup_seconds = seconds_since(start);
  fmm::Points points = fmm::make_points(o.distribution, n, o.seed);
  fmm::Potentials result;
  std::vector<double> seconds, tree, upward, interactions, downward;
  for (int step = 0; step < o.steps; ++step) {
    if (step > 0) move_points(points);
    for (int rep = 0; rep < o.repeat; ++rep) {
      fmm::PhaseTimes times;
      start = std::chrono::steady_clock::now();
      result = solver.evaluate(points, times);
      seconds.push_back(seconds_since(start));
      tree.push_back(times.tree);
      upward.push_back(times.upward);
      interactions.push_back(times.interactions);
      downward.push_back(times.downward);
    }
  }
  const double time = median(seconds);
  const char* dist = fmm::to_string(o.distribution);
  std::printf("points      %zu %s (seed %llu), leaf size %ld\n", n, dist,
              static_cast<unsigned long long>(o.seed), o.leaf);
  std::printf("order       %d for eps %g (solver set up in %.3f s)\n", solver.order(), o.eps,
              setup_seconds);
  std::printf("time        %.4f s per evaluation (median of %zu)\n", time, seconds.size());
  std::printf("phases      tree %.4f, upward %.4f, interactions %.4f, downward %.4f s (medians)\n",
              median(tree), median(upward), median(interactions), median(downward));
  std::printf("performance %.3g points/s\n", static_cast<double>(n) / time);
  int status = 0;
  fmm::Errors errors;
  std::vector<std::size_t> targets;
  fmm::Potentials reference;
  if (o.check) {
    start = std::chrono::steady_clock::now();
    targets = fmm::sample_targets(n, n <= exact_check_limit ? n : check_samples);
    reference = fmm::direct_sum_at(points, targets);
    errors = fmm::errors(fmm::at_targets(result, targets), reference);
    const double check_seconds = seconds_since(start);
    // Written so that a NaN fails.
    const bool pass = errors.potential <= o.eps && errors.field <= 10 * o.eps;
    std::printf(
        "check       relative L2 error at %zu of %zu points (%s, last step): potential %.3g, "
        "field %.3g: %s (%.2f s)\n",
        errors.targets, n, errors.targets == n ? "all" : "sampled", errors.potential, errors.field,
        pass ? "PASS" : "FAIL", check_seconds);
    if (!pass) status = 1;
  }
  char eps_text[32];
  std::snprintf(eps_text, sizeof eps_text, "%g", o.eps);
  const std::string param = "n=" + std::to_string(n) + ",dist=" + dist + ",eps=" + eps_text;
  std::printf(
      "RESULT bench=fmm system=versa param=%s,devices=cpu metric=seconds value=%.6g unit=s\n",
      param.c_str(), time);
  if (o.check) {
    std::printf(
        "RESULT bench=fmm system=versa param=%s,devices=cpu metric=rel_error_potential "
        "value=%.6g unit=1\n",
        param.c_str(), errors.potential);
    std::printf(
        "RESULT bench=fmm system=versa param=%s,devices=cpu metric=rel_error_field value=%.6g "
        "unit=1\n",
        param.c_str(), errors.field);
  }
  // Only after a passing check, so that a peer is never measured against a failed run's files.
  if (status == 0 && !o.save_points.empty()) fmm::save_points(o.save_points, points);
  if (status == 0 && !o.save_reference.empty())
    fmm::save_reference(o.save_reference, n, targets, reference);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Computes the Laplace potential and field at N charged points with the fast multipole\n"
      "method (serial), and reports the time per evaluation and, with --check, its error.",
      "fmm"};
  Options options;
  add_options(app, options);
  if (const std::optional<int> status = example::parse_command_line(app, argc, argv))
    return *status;
  try {
    return run(options);
  } catch (const std::exception& e) {
    return example::wrong_call(app.get_name(), e.what());
  }
}
