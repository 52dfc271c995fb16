// Command-line tool: the FMM as a task program on Versa (task_program.hpp), or run in order in
// one thread (--sequential), on N points of a chosen distribution, reporting the time per
// evaluation and of each pass and, with --check, the relative error of the potential and the
// field against the direct sum at sampled targets.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accuracy.hpp"
#include "command_line.hpp"
#include "distributions.hpp"
#include "fmm.hpp"
#include "interpolation.hpp"
#include "leaf_tuner.hpp"
#include "options.hpp"
#include "p2p.hpp"
#include "point_files.hpp"
#include "result_line.hpp"
#include "run_report.hpp"
#include "task_program.hpp"

namespace {

struct Options {
  long n = 100000;
  long targets = 0;  // separate targets; 0: the field at the sources
  fmm::Distribution distribution = fmm::Distribution::uniform;
  double eps = 1e-6;
  long leaf = 0;  // by the order
  long group = static_cast<long>(fmm::default_group_size);
  example::Devices devices;
  long device_memory_mib = 0;
  int workers = 0;
  fmm::Placements place{};
  std::string place_text;  // as given, for the RESULT lines
  bool sequential = false;
  bool tune_leaf = false;
  bool overlap_tree = false;
  bool m2l_products = false;
  std::string trace;
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

// The files a peer FMM reads to evaluate the same points against the same reference
// (point_files.hpp; bench/fmm uses them).
void add_file_options(example::OptionParser& parser, Options& o) {
  parser
      .option("--save-points", o.save_points,
              "write the points of the last step to FILE (point_files.hpp), once the\n"
              "run and its check, if any, have passed")
      .type_name("FILE");
  parser
      .option("--save-reference", o.save_reference,
              "write the check's targets and its direct sum there to FILE, once the\n"
              "check has passed")
      .type_name("FILE")
      .needs("--check");
}

void add_options(example::OptionParser& parser, Options& o) {
  fmm::add_point_set_options(parser, o.n, o.distribution, o.eps);
  parser
      .option("--targets", o.targets,
              "evaluate at M separate targets of the same distribution (another seed)\n"
              "instead of at the sources")
      .type_name("M")
      .positive();
  fmm::add_tree_options(parser, o.leaf, o.group);
  example::add_devices_option(parser, o.devices);
  example::add_device_memory_option(parser, o.device_memory_mib, o.devices,
                                    "cap each device's memory at M MiB");
  example::add_workers_option(parser, o.workers);
  example::add_parsed_option(
      parser, "--place", o.place,
      [&o](const std::string& text) {
        o.place_text = text;
        return fmm::parse_placements(text);
      },
      "where each kernel's tasks run, e.g. p2p=gpu,m2l=auto (rules: auto,\n"
      "cpu, gpu, prefer-gpu; kernels: p2m m2m compress m2l p2l m2p p2p expand\n"
      "l2l l2p, or all; default auto)")
      .type_name("K=R,...");
  parser.flag("--sequential", o.sequential,
              "run the tasks in order in one thread instead of on the runtime");
  parser.flag("--tune-leaf", o.tune_leaf,
              "tune the leaf size over the steps towards the fastest (fmm::LeafTuner),\n"
              "starting from --leaf");
  parser.flag("--overlap-tree", o.overlap_tree,
              "build each evaluation's tree while the previous evaluation's tasks run\n"
              "(with --steps or --repeat; the time per evaluation is then the time\n"
              "between two evaluations' ends)");
  parser.flag("--m2l-products", o.m2l_products,
              "run M2L tasks on devices as batched matrix products (cuBLAS grouped\n"
              "batched GEMMs) instead of the block kernel");
  example::add_trace_option(parser, o.trace, "all evaluations");
  example::add_positive_option(
      parser, "--steps", o.steps, "K",
      "evaluate K times with one solver, moving the points a little in between");
  example::add_repeat_option(parser, o.repeat, "evaluate R times per step");
  parser.flag("--check", o.check,
              "compare the last evaluation with the direct sum (all points up to\n"
              "N = 20000, else 1000 sampled targets) and say whether the potential's\n"
              "error is at most eps and the field's at most 10 eps");
  parser.option("--seed", o.seed, "seed of the point generator").type_name("S").show_default();
  add_file_options(parser, o);
  parser.validate([&o] {
    for (int k = 0; k < fmm::kernel_count; ++k)
      if (o.place[static_cast<std::size_t>(k)] == versa::Placement::gpu_only &&
          !o.devices.accelerators())
        throw example::OptionError("--place", std::string(fmm::to_string(fmm::Kernel(k))) +
                                                  "=gpu, but --devices " + o.devices.list +
                                                  " has no GPU or emulated device");
    if (o.targets > 0 && (!o.save_points.empty() || !o.save_reference.empty()))
      throw example::OptionError("--targets", "the point files hold sources only: no --save-*");
    if (o.sequential &&
        (o.devices.list != "auto" || o.workers > 0 || !o.trace.empty() || o.overlap_tree))
      throw example::OptionError(
          "--sequential", "runs in one thread: no --devices, --workers, --trace or --overlap-tree");
    if (o.m2l_products && !o.devices.accelerators())
      throw example::OptionError(
          "--m2l-products", "needs a gpu or emulated device among --devices " + o.devices.list);
    if (o.overlap_tree && o.tune_leaf)
      throw example::OptionError("--overlap-tree",
                                 "the next tree is built before --tune-leaf chooses its leaf size");
  });
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

// The middle value, or the mean of the two middle ones.
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 == 1 ? values[half] : (values[half - 1] + values[half]) / 2;
}

// Near-field point pairs per second of one worker of each device kind that ran P2P in the last
// evaluation: its pairs over its P2P tasks' kernel time, summed over its workers.
std::vector<std::pair<std::string, double>> p2p_pairs_per_second(
    const fmm::TaskProgram& program, const std::vector<versa::TaskStatistics>& tasks) {
  std::vector<std::pair<std::string, double>> rates;
  for (const auto& [kind, pairs] : program.p2p_pairs()) {
    double seconds = 0;
    for (const versa::TaskStatistics& s : tasks)
      if (s.device_kind == kind && (s.task_type == "p2p_inner" || s.task_type == "p2p_pair"))
        seconds += s.kernel_seconds;
    if (seconds > 0) rates.emplace_back(kind, pairs / seconds);
  }
  return rates;
}

// The kernels as the report names them, with their task types' names.
std::vector<example::Kernel> report_kernels() {
  std::vector<example::Kernel> kernels;
  for (int k = 0; k < fmm::kernel_count; ++k) {
    const char* name = fmm::to_string(static_cast<fmm::Kernel>(k));
    kernels.push_back({name, name});
  }
  return kernels;
}

int run(const Options& o) {
  const auto n = static_cast<std::size_t>(o.n);
  fmm::use_one_blas_thread();
  auto start = std::chrono::steady_clock::now();
  fmm::Solver solver({.eps = o.eps,
                      .leaf_size = fmm::leaf_size_option(o.leaf),
                      .group_size = static_cast<std::size_t>(o.group)});
  const double setup_seconds = seconds_since(start);
  std::optional<versa::Runtime> rt;
  std::optional<fmm::TaskProgram> program;
  if (!o.sequential) {
    versa::Config config = example::runtime_config(o.devices, o.workers, o.trace);
    config.task_statistics = true;
    config.device_memory_limit = static_cast<std::size_t>(o.device_memory_mib) << 20;
    // One runtime for every evaluation: its performance model calibrates on the first.
    rt.emplace(config);
    example::announce(*rt, o.devices);
    program.emplace(*rt, solver, o.place);
    program->set_m2l_products(o.m2l_products);
  }
  fmm::Points points = fmm::make_points(o.distribution, n, o.seed);
  std::optional<fmm::Points> targets;
  if (o.targets > 0)
    targets = fmm::make_points(o.distribution, static_cast<std::size_t>(o.targets), o.seed + 1);
  // With --overlap-tree, the next evaluation's tree is prepared on another thread while this
  // one's tasks run: moving the points for the next step happens then too.
  const int evaluations = o.steps * o.repeat;
  int evaluated = 0;
  auto prepare = [&] {
    return program->prepare(targets ? fmm::sources_and_targets(points, *targets) : points);
  };
  std::future<std::unique_ptr<fmm::PreparedEvaluation>> next_tree;
  // The last evaluation's tree and arrays, freed on the thread that prepares the next one: at
  // 10^7 points, returning their pages to the system takes 0.05 s.
  std::unique_ptr<fmm::PreparedEvaluation> finished;
  // Each evaluation writes over the last one's potentials, as an iterative solver would keep
  // its arrays (at 10^7 points, allocating and zeroing them again takes a thread 0.16 s).
  auto evaluate_overlapped = [&](fmm::PhaseTimes& times, fmm::Potentials& into) {
    std::unique_ptr<fmm::PreparedEvaluation> prepared =
        next_tree.valid() ? next_tree.get() : prepare();
    if (++evaluated < evaluations) {
      if (evaluated % o.repeat == 0) move_points(points);
      next_tree =
          std::async(std::launch::async, [&prepare, retired = std::move(finished)]() mutable {
            retired.reset();
            return prepare();
          });
    }
    if (targets)
      into = fmm::results_at_targets(program->run(*prepared, times), targets->size());
    else
      program->run(*prepared, times, into);
    finished = std::move(prepared);
  };
  auto evaluate = [&](fmm::PhaseTimes& times, fmm::Potentials& into) {
    if (o.overlap_tree) return evaluate_overlapped(times, into);
    if (targets)
      into = program ? program->evaluate(points, *targets, times)
                     : solver.evaluate(points, *targets, times);
    else if (program)
      program->run(*program->prepare(points), times, into);
    else
      into = solver.evaluate(points, times);
  };
  fmm::LeafTuner tuner(solver.leaf_size());
  std::vector<std::size_t> leaf_sizes;  // per step, when tuned
  fmm::Potentials result;
  std::vector<double> seconds, tree, upward, m2l, p2p, downward;
  std::vector<versa::DeviceStatistics> devices;
  std::vector<versa::TaskStatistics> tasks;  // the last evaluation's
  for (int step = 0; step < o.steps; ++step) {
    if (step > 0 && !o.overlap_tree) move_points(points);
    if (o.tune_leaf) {
      leaf_sizes.push_back(tuner.leaf_size());
      solver = solver.with_leaf_size(tuner.leaf_size());
      if (program) program->set_leaf_size(tuner.leaf_size());
    }
    std::vector<double> step_seconds;
    for (int rep = 0; rep < o.repeat; ++rep) {
      fmm::PhaseTimes times;
      const auto devices_before = rt ? rt->statistics() : devices;
      const auto tasks_before = rt ? rt->task_statistics() : tasks;
      start = std::chrono::steady_clock::now();
      evaluate(times, result);
      step_seconds.push_back(seconds_since(start));
      if (rt) {
        devices = example::statistics_since(*rt, devices_before);
        tasks = example::task_statistics_since(*rt, tasks_before);
      }
      tree.push_back(times.tree);
      upward.push_back(times.upward);
      m2l.push_back(times.m2l);
      p2p.push_back(times.p2p);
      downward.push_back(times.downward);
    }
    if (o.tune_leaf) tuner.record(median(step_seconds));
    seconds.insert(seconds.end(), step_seconds.begin(), step_seconds.end());
  }
  const double time = median(seconds);
  const char* dist = fmm::to_string(o.distribution);
  std::printf("points      %zu %s (seed %llu), leaf size %zu, group size %ld\n", n, dist,
              static_cast<unsigned long long>(o.seed), solver.leaf_size(), o.group);
  if (targets)
    std::printf("targets     %zu %s (seed %llu)\n", targets->size(), dist,
                static_cast<unsigned long long>(o.seed + 1));
  if (o.tune_leaf) {
    std::printf("leaf sizes ");
    for (std::size_t leaf : leaf_sizes) std::printf(" %zu", leaf);
    std::printf(" (tuned per step); fastest %zu at %.4f s\n", tuner.best_leaf_size(),
                tuner.best_seconds());
  }
  if (rt) {
    example::print_devices(rt->cpu_workers(), devices);
    std::printf("\n");
  } else {
    std::printf("devices     one thread, tasks in order (--sequential)\n");
  }
  std::printf(
      "order       %d for eps %g (M2L rank %zu, %.1f per offset on average; solver set "
      "up in %.3f s)\n",
      solver.order(), o.eps, solver.operators().rank(), solver.operators().mean_m2l_operator_rank(),
      setup_seconds);
  std::printf("time        %.4f s per evaluation (median of %zu%s)\n", time, seconds.size(),
              o.overlap_tree ? "; each tree built while the evaluation before ran" : "");
  std::printf(
      "phases      tree %.4f, upward %.4f, m2l %.4f, p2p %.4f, downward %.4f s (medians%s)\n",
      median(tree), median(upward), median(m2l), median(p2p), median(downward),
      rt ? "; kernel time summed over the workers" : "");
  if (rt) {
    std::printf("tasks       last evaluation:\n");
    const std::vector<example::Kernel> kernels = report_kernels();
    example::print_tasks_per_kind(tasks, kernels);
    example::print_kernel_times(tasks, kernels, rt->cpu_workers(), seconds.back());
    if (devices.size() > 1) example::print_transfers(devices);
    const auto& work = program->work();
    std::printf(
        "work        p2p %.4g point pairs (each pair both ways), m2l %.4g cell pairs (last "
        "evaluation)\n",
        work[static_cast<int>(fmm::Kernel::p2p_inner)] +
            work[static_cast<int>(fmm::Kernel::p2p_pair)],
        work[static_cast<int>(fmm::Kernel::m2l)]);
  }
  std::vector<std::pair<std::string, double>> p2p_rates;
  if (rt) {
    p2p_rates = p2p_pairs_per_second(*program, tasks);
    std::printf("near field ");
    for (const auto& [kind, rate] : p2p_rates) std::printf(" %s %.3g", kind.c_str(), rate);
    std::printf(" point pairs/s per worker (each pair once; CPU kernels: %s)\n",
                fmm::p2p_target_name());
  }
  std::printf("performance %.3g points/s\n", static_cast<double>(n) / time);
  int status = 0;
  fmm::Errors errors;
  std::vector<std::size_t> checked;  // the sources the check compared, without --targets
  fmm::Potentials reference;
  if (o.check) {
    start = std::chrono::steady_clock::now();
    const std::size_t m = targets ? targets->size() : n;
    if (targets) {
      errors =
          fmm::sampled_errors(points, *targets, result, m <= exact_check_limit ? m : check_samples);
    } else {
      checked = fmm::sample_targets(n, n <= exact_check_limit ? n : check_samples);
      reference = fmm::direct_sum_at(points, checked);
      errors = fmm::errors(fmm::at_targets(result, checked), reference);
    }
    const double check_seconds = seconds_since(start);
    // Written so that a NaN fails.
    const bool pass = errors.potential <= o.eps && errors.field <= 10 * o.eps;
    std::printf(
        "check       relative L2 error at %zu of %zu %s (%s, last step): potential %.3g, "
        "field %.3g: %s (%.2f s)\n",
        errors.targets, m, targets ? "targets" : "points", errors.targets == m ? "all" : "sampled",
        errors.potential, errors.field, pass ? "PASS" : "FAIL", check_seconds);
    if (!pass) status = 1;
  }
  char eps_text[32];
  std::snprintf(eps_text, sizeof eps_text, "%g", o.eps);
  const std::string used = rt ? example::devices_used(devices, '+') : "sequential";
  // What differs from the defaults, so that each run's RESULT lines have a key of their own.
  std::string place = o.place_text;
  std::replace(place.begin(), place.end(), ',', '+');
  const std::size_t auto_pin =
      rt ? versa::Config::from_environment(versa::Config{}).auto_pin_bytes : 0;
  const std::string param =
      "n=" + std::to_string(n) + (targets ? ",targets=" + std::to_string(targets->size()) : "") +
      ",dist=" + dist + ",eps=" + eps_text + ",devices=" + used +
      (o.m2l_products ? ",m2l=products" : "") + (place.empty() ? "" : ",place=" + place) +
      (o.leaf != 0 ? ",leaf=" + std::to_string(o.leaf) : "") +
      (o.group != static_cast<long>(fmm::default_group_size) ? ",group=" + std::to_string(o.group)
                                                             : "") +
      (o.overlap_tree ? ",overlap=tree" : "") +
      (rt && auto_pin != versa::Config{}.auto_pin_bytes
           ? ",auto_pin_kib=" + std::to_string(auto_pin >> 10)
           : "");
  example::print_result("fmm", "versa", param, "seconds", time, "s");
  const std::pair<const char*, double> phases[] = {{"tree", median(tree)},
                                                   {"upward", median(upward)},
                                                   {"m2l", median(m2l)},
                                                   {"downward", median(downward)},
                                                   {"p2p", median(p2p)}};
  for (const auto& [phase, value] : phases)
    example::print_result("fmm", "versa", param, std::string("phase_seconds_") + phase, value, "s");
  for (const auto& [kind, rate] : p2p_rates)
    example::print_result("fmm", "versa", param + ",kind=" + kind, "p2p_pairs_per_s", rate, "1/s");
  if (o.check) {
    example::print_result("fmm", "versa", param, "rel_error_potential", errors.potential, "1");
    example::print_result("fmm", "versa", param, "rel_error_field", errors.field, "1");
  }
  // Only after a passing check, so that a peer is never measured against a failed run's files.
  if (status == 0 && !o.save_points.empty()) fmm::save_points(o.save_points, points);
  if (status == 0 && !o.save_reference.empty())
    fmm::save_reference(o.save_reference, n, checked, reference);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return example::tool_main<Options>(
      argc, argv, "fmm",
      "Computes the Laplace potential and field at N charged points with the fast multipole\n"
      "method, as tasks on Versa, and reports the time per evaluation and, with --check, its "
      "error.",
      add_options, run);
}
