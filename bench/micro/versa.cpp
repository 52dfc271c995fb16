// The micro-benchmark patterns on Versa.
//
// Each pattern constructs a Runtime with `workers` workers and warms it up as the oneTBB patterns
// warm up their arena before the clock starts (thread start-up is not timed, as for the other
// systems), and destroys it after the clock stops.
// Submission happens from the main thread, which is not a worker, as with StarPU.
#include "versa/versa.hpp"

#include <malloc.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/harness.hpp"
#include "micro/systems.hpp"

namespace bench {
namespace {

constexpr int pool_size = 1024;

// CPU only: these suites compare CPU runtimes (a GPU, if present, is not used).
versa::Config config_for(int workers) {
  versa::Config config;
  config.cpu_workers = workers;
  config.gpus = 0;
  config.quiet = true;
  return config;
}

// A runtime with `workers` CPU workers that has run a few tasks on every worker, as tbb.cpp warms
// up its arena, so that the clock starts with the workers awake (libgomp's are too, inside the
// parallel region) rather than asleep since the constructor: the short patterns (generations
// with n = 1 lasts microseconds) would otherwise time one wake-up.
struct WarmRuntime : versa::Runtime {
  explicit WarmRuntime(int workers) : versa::Runtime(config_for(workers)) {
    auto busy = versa::task_type("warm-up").cpu([] { busy_wait_us(50); });
    for (int i = 0; i < 4 * workers; ++i) submit(busy);
    wait_all();
  }
};

double spawn(int workers, long tasks) {
  WarmRuntime rt{workers};
  auto empty = versa::task_type("empty").cpu([] {});
  const auto start = Clock::now();
  for (long i = 0; i < tasks; ++i) rt.submit(empty);
  rt.wait_all();
  return seconds_since(start);
}

double independent(int workers, long tasks, double task_us) {
  WarmRuntime rt{workers};
  auto busy = versa::task_type("busy").cpu([task_us] { busy_wait_us(task_us); });
  const auto start = Clock::now();
  for (long i = 0; i < tasks; ++i) rt.submit(busy);
  rt.wait_all();
  return seconds_since(start);
}

double cholesky_dag(int workers, int tiles, double task_us) {
  WarmRuntime rt{workers};
  std::vector<versa::Token> tile;  // lower triangle, row-major index m * tiles + k
  tile.reserve(tiles * tiles);
  for (int i = 0; i < tiles * tiles; ++i) tile.push_back(rt.token());
  auto A = [&](int m, int k) -> const versa::Token& { return tile[m * tiles + k]; };
  auto body = [task_us] { busy_wait_us(task_us); };
  auto potrf = versa::task_type("potrf").cpu(body);
  auto trsm = versa::task_type("trsm").cpu(body);
  auto syrk = versa::task_type("syrk").cpu(body);
  auto gemm = versa::task_type("gemm").cpu(body);
  const auto start = Clock::now();
  for (int k = 0; k < tiles; ++k) {
    // The critical path runs through potrf(k) and the updates feeding potrf(k+1).
    rt.submit(potrf, versa::write(A(k, k)), versa::priority(2));
    for (int m = k + 1; m < tiles; ++m)
      rt.submit(trsm, versa::read(A(k, k)), versa::write(A(m, k)), versa::priority(m == k + 1));
    for (int m = k + 1; m < tiles; ++m) {
      rt.submit(syrk, versa::read(A(m, k)), versa::write(A(m, m)), versa::priority(m == k + 1));
      for (int j = k + 1; j < m; ++j)
        rt.submit(gemm, versa::read(A(m, k)), versa::read(A(j, k)), versa::write(A(m, j)));
    }
  }
  rt.wait_all();
  return seconds_since(start);
}

template <std::size_t... J>
void submit_reading(versa::Runtime& rt, const auto& type, const std::vector<versa::Token>& pool,
                    long i, std::index_sequence<J...>) {
  constexpr long k = sizeof...(J);
  rt.submit(type, versa::read(pool[(i * k + static_cast<long>(J)) % pool_size])...);
}

template <std::size_t K>
double dependencies_k(int workers, long tasks) {
  WarmRuntime rt{workers};
  std::vector<versa::Token> pool;
  for (int i = 0; i < pool_size; ++i) pool.push_back(rt.token());
  auto empty = versa::task_type("empty").cpu([] {});
  const auto start = Clock::now();
  for (long i = 0; i < tasks; ++i)
    submit_reading(rt, empty, pool, i, std::make_index_sequence<K>());
  rt.wait_all();
  return seconds_since(start);
}

double dependencies(int workers, long tasks, int handles) {
  switch (handles) {
    case 0:
      return dependencies_k<0>(workers, tasks);
    case 1:
      return dependencies_k<1>(workers, tasks);
    case 2:
      return dependencies_k<2>(workers, tasks);
    case 4:
      return dependencies_k<4>(workers, tasks);
    case 8:
      return dependencies_k<8>(workers, tasks);
    case 16:
      return dependencies_k<16>(workers, tasks);
    case 32:
      return dependencies_k<32>(workers, tasks);
    case 64:
      return dependencies_k<64>(workers, tasks);
    default:
      throw std::invalid_argument(
          "versa dependencies: handles must be 0 or a power of two up to 64");
  }
}

TaskCountResult task_count(int workers, long tasks) {
  WarmRuntime rt{workers};
  auto gate = rt.token("gate");
  auto busy = versa::task_type("busy").cpu([] { busy_wait_us(1.0); });
  TaskCountResult result;
  const auto start = Clock::now();
  {
    // Holding the gate for writing keeps every task (a reader of the gate) pending.
    auto held = rt.acquire(versa::write(gate));
    // Task records come from the runtime's pool, whose slabs are heap blocks: heap growth counts
    // them (the first slab already exists: it served the acquire).
    const double before = heap_in_use();
    for (long i = 0; i < tasks; ++i) rt.submit(busy, versa::read(gate));
    result.bytes_per_pending_task = (heap_in_use() - before) / static_cast<double>(tasks);
  }
  rt.wait_all();
  result.seconds = seconds_since(start);
  return result;
}

double generations(int workers, long n, long rounds) {
  WarmRuntime rt{workers};
  auto item = rt.token("item");
  auto empty = versa::task_type("empty").cpu([] {});
  const auto start = Clock::now();
  for (long round = 0; round < rounds; ++round) {
    rt.submit(empty, versa::write(item));
    for (long i = 0; i < n; ++i) rt.submit(empty, versa::read(item));
    for (long i = 0; i < n; ++i) rt.submit(empty, versa::write(item));
    rt.wait_all();
  }
  return seconds_since(start);
}

double overwrite_after_readers(int workers, long n, double task_us, bool overwrite) {
  std::vector<double> values(1024, 0.0);
  double seconds = 0;
  {
    WarmRuntime rt{workers};
    auto item = rt.data(values, "item");
    std::atomic<std::int64_t> last_writer_end{0};
    auto read = [task_us](versa::Span<const double> v) {
      busy_wait_us(task_us);
      if (v[0] < 0) std::abort();  // uses the data
    };
    auto overwrite_all = [task_us, &last_writer_end](versa::Span<double> v) {
      busy_wait_us(task_us);
      for (double& x : v) x = 1.0;
      const std::int64_t now = Clock::now().time_since_epoch().count();
      std::int64_t seen = last_writer_end.load();
      while (now > seen && !last_writer_end.compare_exchange_weak(seen, now)) {
      }
    };
    const auto start = Clock::now();
    rt.submit("init", overwrite_all, versa::write(item));
    for (long i = 0; i < n; ++i) rt.submit("reader", read, versa::read(item));
    for (long i = 0; i < n; ++i) {
      if (overwrite) {
        rt.submit("writer", overwrite_all, versa::write_only(item), versa::priority(1));
      } else {
        rt.submit("writer", overwrite_all, versa::write(item), versa::priority(1));
      }
    }
    rt.wait_all();
    seconds =
        std::chrono::duration<double>(Clock::time_point(Clock::duration(last_writer_end)) - start)
            .count();
  }
  if (values[0] != 1.0 || values.back() != 1.0) {
    std::fprintf(stderr, "overwrite_after_readers: versa left a wrong value\n");
    std::exit(1);
  }
  return seconds;
}

// Each array is a handle with the sum reduction; every task adds into its handle, so the tasks of
// one handle may run at once, each on a partial buffer of the runtime's (renaming). Reading the
// handles before the clock stops makes sure the partials have been merged into the arrays.
double reduction(int workers, long tasks, int handles, long elements, double task_us) {
  std::vector<std::vector<double>> sums(static_cast<std::size_t>(handles),
                                        std::vector<double>(static_cast<std::size_t>(elements)));
  double seconds = 0;
  {
    WarmRuntime rt{workers};
    std::vector<versa::Handle<double>> handle;
    for (auto& values : sums) {
      handle.push_back(rt.data(values));
      handle.back().set_reduction(versa::sum<double>());
    }
    const auto start = Clock::now();
    for (long i = 0; i < tasks; ++i) {
      rt.submit(
          "add",
          [task_us, contribution = reduction_contribution(i)](versa::Span<double> v) {
            busy_wait_us(task_us);
            for (double& x : v) x += contribution;
          },
          versa::add(handle[static_cast<std::size_t>(i % handles)]));
    }
    rt.wait_all();
    for (const auto& h : handle) rt.acquire(versa::read(h));
    seconds = seconds_since(start);
  }
  for (int h = 0; h < handles; ++h)
    check_reduction("versa", sums[static_cast<std::size_t>(h)].data(), elements, h, handles, tasks);
  return seconds;
}

}  // namespace

std::vector<System> versa_systems() {
  System system;
  system.name = "versa";
  system.spawn = spawn;
  system.independent = independent;
  system.cholesky_dag = cholesky_dag;
  system.dependencies = dependencies;
  system.task_count = task_count;
  system.generations = generations;
  system.overwrite_after_readers = overwrite_after_readers;
  system.reduction = reduction;
  return {system};
}

}  // namespace bench
