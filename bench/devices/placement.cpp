// Placement: a mixed workload of task types that cost differently on the CPU and on the device
// (some much faster on the device, some slower, some alike). Automatic placement, once its
// performance model is calibrated, should finish close to the lower bound: the work balanced
// over all workers with every task where it helps most (the fractional optimum). The bound is
// computed from what the tasks really took in the run (each body times itself): on a shared
// virtual machine a 250 us sleep takes 300-500 us, and no placement can make it shorter.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.hpp"
#include "devices/cuda_spin.hpp"
#include "devices/gpu_config.hpp"
#include "devices/suites.hpp"
#include "versa/versa.hpp"
#if VERSA_HAVE_CUDA
#include "versa/cuda.hpp"
#endif

namespace bench {

namespace {

struct Kind {
  const char* name;
  double cpu_us;     // on one CPU worker (busy-waiting)
  double device_us;  // on the device (waiting without spinning)
  int count;
  // Where the tasks of the last run went, and what they took there (seconds, summed).
  struct Tally {
    std::atomic<int> tasks{0};
    std::atomic<double> seconds{0};
  };
  std::shared_ptr<Tally> on_cpu = std::make_shared<Tally>();
  std::shared_ptr<Tally> on_device = std::make_shared<Tally>();
};

// The smallest makespan of any fractional assignment of the tasks to `cpus` CPU workers and
// one device: binary search on T, filling the device first with the kinds it helps most.
double lower_bound(const std::vector<Kind>& kinds, int cpus) {
  std::vector<Kind> by_gain = kinds;
  std::sort(by_gain.begin(), by_gain.end(), [](const Kind& a, const Kind& b) {
    return a.cpu_us / a.device_us > b.cpu_us / b.device_us;
  });
  double low = 0, high = 0;
  for (const Kind& k : kinds) high += k.count * k.cpu_us / cpus;
  for (int iteration = 0; iteration < 100; ++iteration) {
    const double t = 0.5 * (low + high);
    double device_room = t, cpu_work = 0;
    for (const Kind& k : by_gain) {
      const double on_device = std::min<double>(k.count, device_room / k.device_us);
      device_room -= on_device * k.device_us;
      cpu_work += (k.count - on_device) * k.cpu_us;
    }
    (cpu_work <= t * cpus ? high : low) = t;
  }
  return high * 1e-6;
}

struct Workload {
  versa::Runtime rt;
  std::vector<std::vector<double>> inputs, outputs;
  std::vector<versa::Handle<double>> input_handles, output_handles;

  Workload(const versa::Config& config, std::size_t tasks)
      : rt(config), inputs(tasks, std::vector<double>(8192, 1.0)), outputs(inputs) {
    for (std::size_t i = 0; i < tasks; ++i) {
      input_handles.push_back(rt.data(inputs[i]));
      output_handles.push_back(rt.data(outputs[i]));
    }
  }
};

auto make_type(const Kind& kind) {
  // The GPU kernel spins for the nominal time on the GPU's wall-clock timer, which is exact: its
  // cost is counted as nominal.
  auto with_cuda = [&](auto type) {
#if VERSA_HAVE_CUDA
    return type.cuda([us = kind.device_us, tally = kind.on_device](
                         versa::CudaContext& gpu, versa::Span<const double>, versa::Span<double>) {
      spin_on_stream(gpu.stream(), us * 1e-6);
      tally->tasks.fetch_add(1);
      tally->seconds.fetch_add(us * 1e-6);
    });
#else
    return type;
#endif
  };
  return with_cuda(versa::task_type(kind.name)
                       .cpu([us = kind.cpu_us, tally = kind.on_cpu](versa::Span<const double>,
                                                                    versa::Span<double> out) {
                         const auto start = Clock::now();
                         busy_wait_us(us);
                         out[0] += 1;
                         tally->tasks.fetch_add(1);
                         tally->seconds.fetch_add(seconds_since(start));
                       })
                       .emulated([us = kind.device_us, tally = kind.on_device](
                                     versa::Span<const double>, versa::Span<double> out) {
                         const auto start = Clock::now();
                         std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us));
                         out[0] += 1;
                         tally->tasks.fetch_add(1);
                         tally->seconds.fetch_add(seconds_since(start));
                       }));
}

// Submits `scale` x each kind's count, interleaved; returns the makespan in seconds.
template <class Types>
double run_mix(Workload& w, const std::vector<Kind>& kinds, const Types& types, double scale) {
  std::vector<int> remaining;
  for (const Kind& k : kinds) {
    remaining.push_back(static_cast<int>(k.count * scale));
    for (Kind::Tally* tally : {k.on_cpu.get(), k.on_device.get()}) {
      tally->tasks.store(0);
      tally->seconds.store(0);
    }
  }
  const auto start = Clock::now();
  std::size_t next = 0;
  for (bool any = true; any;) {
    any = false;
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      if (remaining[k] == 0) continue;
      --remaining[k];
      any = true;
      const std::size_t i = next++ % w.input_handles.size();
      w.rt.submit(types[k], versa::read(w.input_handles[i]), versa::write(w.output_handles[i]));
    }
  }
  w.rt.wait_all();
  return seconds_since(start);
}

// Runs the mixed workload on `config` (CPU workers plus one device), calibrating first, and
// prints the table and the RESULT lines labelled with `device`.
void run_placement(const versa::Config& config, const std::string& device, int cpus,
                   const DeviceOptions& options) {
  const double scale = options.quick ? 0.5 : 1.0;
  const std::vector<Kind> kinds = {
      {"dense", 2000, 250, 80},    // 8x faster on the device
      {"panel", 800, 1600, 60},    // 2x slower on the device
      {"update", 1000, 700, 120},  // a little faster on the device
  };
  std::vector<Kind> scaled = kinds;
  for (Kind& k : scaled) k.count = static_cast<int>(k.count * scale);
  const double bound = lower_bound(scaled, cpus);

  Workload w(config, 64);
  const auto types = std::vector{make_type(kinds[0]), make_type(kinds[1]), make_type(kinds[2])};
  // What the tasks really cost in a run (sleeps overshoot, busy-waits get preempted on a
  // shared machine): the mean where a kind ran on a device kind, else its nominal cost.
  auto measured = [&] {
    std::vector<Kind> real = scaled;
    for (std::size_t i = 0; i < real.size(); ++i) {
      const Kind::Tally& cpu = *kinds[i].on_cpu;
      const Kind::Tally& on_device = *kinds[i].on_device;
      if (cpu.tasks > 0) real[i].cpu_us = cpu.seconds / cpu.tasks * 1e6;
      if (on_device.tasks > 0) real[i].device_us = on_device.seconds / on_device.tasks * 1e6;
    }
    return real;
  };
  const double uncalibrated = run_mix(w, kinds, types, scale);
  const double uncalibrated_bound = lower_bound(measured(), cpus);
  std::vector<double> makespans, ratios, measured_bounds;
  for (int r = 0; r < options.reps; ++r) {
    makespans.push_back(run_mix(w, kinds, types, scale));
    measured_bounds.push_back(lower_bound(measured(), cpus));
    ratios.push_back(makespans.back() / measured_bounds.back());
  }
  const double makespan = median(makespans);
  const double ratio = median(ratios);
  const auto stats = w.rt.statistics();

  std::printf("\n== placement: %d CPU worker%s + 1 %s device, 3 task types ==\n", cpus,
              cpus == 1 ? "" : "s", device.c_str());
  for (const Kind& k : kinds)
    std::printf("  %-7s x%-4d cpu %6.0f us  device %6.0f us   last run: %d on cpu, %d on device\n",
                k.name, static_cast<int>(k.count * scale), k.cpu_us, k.device_us,
                k.on_cpu->tasks.load(), k.on_device->tasks.load());
  std::printf("%-36s %10s %14s %14s\n", "run", "ms", "vs measured", "vs nominal");
  std::printf("%-36s %10.1f\n", "lower bound, nominal costs", bound * 1e3);
  std::printf("%-36s %10.1f\n", "lower bound, measured costs (median)",
              median(measured_bounds) * 1e3);
  std::printf("%-36s %10.1f %14.3f %14.3f\n", "first run (uncalibrated)", uncalibrated * 1e3,
              uncalibrated / uncalibrated_bound, uncalibrated / bound);
  std::printf("%-36s %10.1f %14.3f %14.3f\n", "calibrated (median of runs)", makespan * 1e3, ratio,
              makespan / bound);
  std::printf("tasks run: cpu %llu, %s %llu (all runs); device kernels %.1f ms per run\n",
              static_cast<unsigned long long>(stats[0].tasks), stats[1].name.c_str(),
              static_cast<unsigned long long>(stats[1].tasks),
              stats[1].kernel_seconds * 1e3 / (options.reps + 1));
  const std::string devices = "devices=" + std::to_string(cpus) + "cpu+" + device;
  print_result("placement", "versa", devices, "ratio_to_lower_bound", ratio, "x");
  print_result("placement", "versa", devices + ",uncalibrated", "ratio_to_lower_bound",
               uncalibrated / uncalibrated_bound, "x");
  print_result("placement", "versa", devices + ",nominal_costs", "ratio_to_lower_bound",
               makespan / bound, "x");
}

}  // namespace

void suite_placement(const DeviceOptions& options) {
  // One core drives the device (as StarPU dedicates one to each GPU); the others are workers.
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  const int cpus = std::max(1, cores - 1);
  versa::Config config;
  config.cpu_workers = cpus;
  config.quiet = true;
  config.gpus = 0;
  config.emulated_devices.resize(1);
  run_placement(config, "emulated", cpus, options);
  std::printf("StarPU's dmda cannot be given an emulated device; it is compared on a real GPU.\n");
#if VERSA_HAVE_CUDA
  if (const std::optional<versa::Config> gpu = one_gpu(cpus))
    run_placement(*gpu, "cuda", cpus, options);
#endif
}

}  // namespace bench
