// versa-bench-fmm-starpu: the FMM of examples/fmm on StarPU (starpu_fmm.hpp), the peer of the
// fmm tool (examples/fmm/main.cpp) with the same options and report: N points of a chosen
// distribution, one warm-up evaluation (StarPU's models calibrate), then the median time of
// --repeat evaluations and, with --check, the error against the direct sum; --verify compares
// the last evaluation with the sequential run of the same group tree.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "accuracy.hpp"
#include "command_line.hpp"
#include "common/harness.hpp"
#include "distributions.hpp"
#include "fmm.hpp"
#include "fmm/starpu_fmm.hpp"
#include "interpolation.hpp"
#include "options.hpp"
#include "task_program.hpp"

namespace {

struct Options {
  long n = 100000;
  fmm::Distribution distribution = fmm::Distribution::uniform;
  double eps = 1e-6;
  long leaf = 0;  // by the order
  long group = static_cast<long>(fmm::default_group_size);
  bench::StarpuFmmConfig starpu;
  int warmup = 1;
  int repeat = 1;
  bool check = false;
  bool verify = false;
  std::uint64_t seed = 1;
};

// As the fmm tool: up to this N, --check compares every point; above, this many targets.
constexpr std::size_t exact_check_limit = 20000;
constexpr std::size_t check_samples = 1000;
// --verify: the largest relative L2 difference from the sequential run that passes.
constexpr double verify_tolerance = 1e-12;

bench::ResultsAccess parse_results(const std::string& text) {
  if (text == "redux") return bench::ResultsAccess::redux;
  if (text == "commute") return bench::ResultsAccess::commute;
  throw std::invalid_argument("expects redux or commute, not '" + text + "'");
}

bench::ModelKind parse_model(const std::string& text) {
  if (text == "history") return bench::ModelKind::history;
  if (text == "regression") return bench::ModelKind::regression;
  throw std::invalid_argument("expects history or regression, not '" + text + "'");
}

void add_options(example::OptionParser& parser, Options& o) {
  fmm::add_point_set_options(parser, o.n, o.distribution, o.eps);
  fmm::add_tree_options(parser, o.leaf, o.group);
  example::add_workers_option(parser, o.starpu.workers);
  parser
      .option("--scheduler", o.starpu.scheduler,
              "StarPU scheduling policy: lws, dmda, dmdas, heteroprio, eager, prio, ...")
      .type_name("S")
      .show_default();
  example::add_parsed_option(parser, "--results", o.starpu.results, parse_results,
                             "how results accumulate: commute (default; STARPU_RW|COMMUTE) or\n"
                             "redux (STARPU_REDUX)")
      .type_name("R");
  example::add_parsed_option(parser, "--model", o.starpu.model, parse_model,
                             "performance model of the dm* policies: history (default) or\n"
                             "regression")
      .type_name("M");
  parser.option("--warmup", o.warmup, "evaluations before the timed ones (models calibrate)")
      .type_name("K")
      .non_negative()
      .show_default();
  example::add_repeat_option(parser, o.repeat, "evaluate R times after the warm-up");
  parser.flag("--gpu", o.starpu.gpu,
              "also one CUDA worker per GPU, with the example's CUDA kernels for every pass\n"
              "(a StarPU built with CUDA; the scheduler is then dmda unless given)");
  parser.flag("--m2l-products", o.starpu.m2l_products,
              "with --gpu: M2L on the GPU as batched products (cuBLAS grouped batched\n"
              "GEMMs), as the fmm tool's --m2l-products");
  parser.flag("--check", o.check,
              "compare the last evaluation with the direct sum (all points up to\n"
              "N = 20000, else 1000 sampled targets), as the fmm tool does");
  parser.flag("--verify", o.verify,
              "compare the last evaluation with the sequential run of the same group tree\n"
              "(fmm::Solver::evaluate): relative L2 differences at most 1e-12");
  parser.option("--seed", o.seed, "seed of the point generator").type_name("S").show_default();
  // heteroprio's buckets are set for CPUs only: on GPUs the default is a model-driven policy.
  parser.validate([&parser, &o] {
    if (o.starpu.gpu && !parser.given("--scheduler")) o.starpu.scheduler = "dmda";
    if (o.starpu.m2l_products && !o.starpu.gpu)
      throw example::OptionError("--m2l-products", "needs --gpu");
  });
}

const char* to_string(bench::ResultsAccess access) {
  return access == bench::ResultsAccess::redux ? "STARPU_REDUX" : "STARPU_RW|STARPU_COMMUTE";
}

void print_tasks(const bench::StarpuFmm& starpu, double wall_seconds, int workers) {
  std::printf("tasks       last evaluation: kernel, tasks, kernel seconds summed over workers\n");
  double busy = 0;
  for (int k = 0; k < fmm::kernel_count; ++k) {
    const bench::KernelTally& tally = starpu.last_tasks()[static_cast<std::size_t>(k)];
    std::printf("              %-10s %8ld %9.4f\n", fmm::to_string(static_cast<fmm::Kernel>(k)),
                tally.tasks, tally.seconds);
    busy += tally.seconds;
  }
  std::printf("kernels     %.1f%% of the workers' time in kernels (%.4f s of %d x %.4f s)\n",
              100 * busy / (workers * wall_seconds), busy, workers, wall_seconds);
}

int run(const Options& o) {
  const auto n = static_cast<std::size_t>(o.n);
  fmm::use_one_blas_thread();
  auto start = bench::Clock::now();
  const fmm::Solver solver({.eps = o.eps,
                            .leaf_size = fmm::leaf_size_option(o.leaf),
                            .group_size = static_cast<std::size_t>(o.group)});
  const double setup_seconds = bench::seconds_since(start);
  bench::StarpuFmm starpu(solver, o.starpu);
  const fmm::Points points = fmm::make_points(o.distribution, n, o.seed);
  fmm::Potentials result;
  fmm::PhaseTimes times;
  for (int w = 0; w < o.warmup; ++w) starpu.evaluate(points, times, result);
  std::vector<double> seconds, tree, upward, m2l, p2p, downward;
  for (int rep = 0; rep < o.repeat; ++rep) {
    start = bench::Clock::now();
    starpu.evaluate(points, times, result);
    seconds.push_back(bench::seconds_since(start));
    tree.push_back(times.tree);
    upward.push_back(times.upward);
    m2l.push_back(times.m2l);
    p2p.push_back(times.p2p);
    downward.push_back(times.downward);
  }
  const double time = bench::median(seconds);
  const char* dist = fmm::to_string(o.distribution);
  std::printf("points      %zu %s (seed %llu), leaf size %zu, group size %ld\n", n, dist,
              static_cast<unsigned long long>(o.seed), solver.leaf_size(), o.group);
  std::printf("runtime     StarPU %s, %d CPU workers, %d CUDA workers, results %s, %s models\n",
              o.starpu.scheduler.c_str(), starpu.workers(), starpu.gpus(),
              to_string(o.starpu.results),
              o.starpu.model == bench::ModelKind::history ? "history" : "regression");
  std::printf(
      "order       %d for eps %g (M2L rank %zu, %.1f per offset on average; solver set "
      "up in %.3f s)\n",
      solver.order(), o.eps, solver.operators().rank(), solver.operators().mean_m2l_operator_rank(),
      setup_seconds);
  std::printf("time        %.4f s per evaluation (median of %zu, after %d warm-up)\n", time,
              seconds.size(), o.warmup);
  std::printf(
      "phases      tree %.4f, upward %.4f, m2l %.4f, p2p %.4f, downward %.4f s (medians; "
      "kernel time summed over the workers)\n",
      bench::median(tree), bench::median(upward), bench::median(m2l), bench::median(p2p),
      bench::median(downward));
  print_tasks(starpu, seconds.back(), starpu.workers());
  std::printf("performance %.3g points/s\n", static_cast<double>(n) / time);
  int status = 0;
  fmm::Errors errors;
  if (o.check) {
    start = bench::Clock::now();
    errors = fmm::sampled_errors(points, result, n <= exact_check_limit ? n : check_samples);
    const bool pass = errors.potential <= o.eps && errors.field <= 10 * o.eps;
    std::printf(
        "check       relative L2 error at %zu of %zu points (%s): potential %.3g, field %.3g: "
        "%s (%.2f s)\n",
        errors.targets, n, errors.targets == n ? "all" : "sampled", errors.potential, errors.field,
        pass ? "PASS" : "FAIL", bench::seconds_since(start));
    if (!pass) status = 1;
  }
  if (o.verify) {
    start = bench::Clock::now();
    const fmm::Errors difference = fmm::errors(result, solver.evaluate(points));
    const bool pass =
        difference.potential <= verify_tolerance && difference.field <= verify_tolerance;
    std::printf(
        "verify      relative L2 difference from the sequential run: potential %.3g, field "
        "%.3g: %s (%.2f s)\n",
        difference.potential, difference.field, pass ? "PASS" : "FAIL",
        bench::seconds_since(start));
    if (!pass) status = 1;
  }
  char eps_text[32];
  std::snprintf(eps_text, sizeof eps_text, "%g", o.eps);
  const std::string param = "n=" + std::to_string(n) + ",dist=" + dist + ",eps=" + eps_text +
                            (starpu.gpus() > 0 ? ",devices=cpu+gpu" : ",devices=cpu") +
                            (o.starpu.m2l_products ? ",m2l=products" : "");
  bench::print_result("fmm", "starpu", param, "seconds", time, "s");
  const std::pair<const char*, double> phases[] = {{"tree", bench::median(tree)},
                                                   {"upward", bench::median(upward)},
                                                   {"m2l", bench::median(m2l)},
                                                   {"downward", bench::median(downward)},
                                                   {"p2p", bench::median(p2p)}};
  for (const auto& [phase, value] : phases)
    bench::print_result("fmm", "starpu", param, std::string("phase_seconds_") + phase, value, "s");
  if (o.check) {
    bench::print_result("fmm", "starpu", param, "rel_error_potential", errors.potential, "1");
    bench::print_result("fmm", "starpu", param, "rel_error_field", errors.field, "1");
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  example::OptionParser parser{
      "versa-bench-fmm-starpu",
      "Computes the Laplace potential and field at N charged points with the fast multipole\n"
      "method of examples/fmm, as tasks on StarPU, and reports the time per evaluation."};
  Options options;
  add_options(parser, options);
  return example::run_tool(parser, argc, argv, [&] { return run(options); });
}
