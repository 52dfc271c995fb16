// The runtime on a real GPU, through the public API: a cuBLAS task on handles, data moving
// both ways, pinning of host memory, and the tiled Cholesky on CPU + GPU out of core. Every test
// skips with a message when no GPU can be used (always on machines without one).
#include <gtest/gtest.h>

#include "support/config.hpp"
#include "versa/versa.hpp"

#if VERSA_HAVE_CUDA
#include <atomic>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "versa/cuda.hpp"
#endif

namespace {

#if VERSA_HAVE_CUDA
versa::Config with_gpu() {
  versa::Config config = versa::testing::workers(2);
  config.gpus = 1;
  return config;
}

#define SKIP_WITHOUT_GPU(rt) \
  if ((rt).device_count() == 0) GTEST_SKIP() << "no GPU: " << (rt).topology_summary()

TEST(CudaRuntime, CublasTaskRunsOnTheGpuAndResultsComeHome) {
  versa::Runtime rt{with_gpu()};
  SKIP_WITHOUT_GPU(rt);
  EXPECT_EQ(rt.gpu_count(), 1);
  std::vector<double> x(1 << 16);
  std::iota(x.begin(), x.end(), 0.0);
  auto h = rt.data(x, "x");
  auto scale =
      versa::task_type("scale")
          .cuda([](versa::CudaContext& gpu, versa::Span<double> v, const double& factor) {
            ASSERT_EQ(cublasDscal(gpu.cublas(), static_cast<int>(v.size()), &factor, v.data(), 1),
                      CUBLAS_STATUS_SUCCESS);
          })
          .placement(versa::Placement::gpu_only);
  for (const double factor : {2.0, 3.0, 0.5})
    rt.submit(scale, versa::write(h), versa::value(factor));
  rt.wait_all();
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], 3.0 * static_cast<double>(i));
  const auto stats = rt.statistics();
  EXPECT_EQ(stats[1].tasks, 3u);
  EXPECT_EQ(stats[1].bytes_to_device, x.size() * sizeof(double)) << "copied in once";
  EXPECT_GT(stats[1].kernel_seconds, 0.0);
}

// The host code of a CUDA task runs on the device's worker thread: spawn() there makes children
// of the task (it finishes after them), sync() waits for them while the thread keeps the GPU
// going (children that run on the GPU too, with every stream's task waiting at some point), and
// wait_all()/acquire() are refused.
TEST(CudaRuntime, HostCodeOfACudaTaskSpawnsAndSyncsAsAnyTask) {
  versa::Runtime rt{with_gpu()};
  SKIP_WITHOUT_GPU(rt);
  std::vector<double> x(1 << 12, 1.0);
  auto h = rt.data(x, "x");
  std::atomic<int> children{0};
  std::string refused;
  std::function<void(int)> tree = [&](int level) {
    if (level == 0) return;
    for (int side = 0; side < 2; ++side)
      rt.spawn(versa::task_type("node")
                   .cuda([&tree, &children, level](versa::CudaContext&) {
                     children.fetch_add(1, std::memory_order_relaxed);
                     tree(level - 1);
                   })
                   .placement(versa::Placement::gpu_only));
    rt.sync();
  };
  auto scale =
      versa::task_type("scale")
          .cuda([&](versa::CudaContext& gpu, versa::Span<double> v) {
            try {
              rt.wait_all();
            } catch (const std::logic_error& e) {
              refused = e.what();
            }
            tree(4);
            const double two = 2.0;
            ASSERT_EQ(cublasDscal(gpu.cublas(), static_cast<int>(v.size()), &two, v.data(), 1),
                      CUBLAS_STATUS_SUCCESS);
          })
          .placement(versa::Placement::gpu_only);
  int seen = -1;
  rt.submit(scale, versa::write(h));
  rt.submit(
      "after", [&](versa::Span<const double>) { seen = children.load(); },
      versa::placement(versa::Placement::cpu_only), versa::read(h));
  rt.wait_all();
  EXPECT_EQ(seen, 30) << "the task finished before its children";
  EXPECT_EQ(x[0], 2.0);
  EXPECT_NE(refused.find("wait_all() called inside a task"), std::string::npos) << refused;
}

TEST(CudaRuntime, HostMemoryIsPinnedWhileInUse) {
  versa::Runtime rt{with_gpu()};
  SKIP_WITHOUT_GPU(rt);
  std::vector<double> big(1 << 20);
  auto registered = [](const void* p) {
    cudaPointerAttributes attributes{};
    const bool ok = cudaPointerGetAttributes(&attributes, p) == cudaSuccess;
    (void)cudaGetLastError();
    return ok && attributes.type == cudaMemoryTypeHost;
  };
  auto on_gpu = versa::task_type("on the GPU")
                    .cuda([](versa::CudaContext&, versa::Span<double>) {})
                    .placement(versa::Placement::gpu_only);
  {
    auto h = rt.data(big);  // 8 MiB: pinned before its first copy, with the handle
    EXPECT_FALSE(registered(big.data())) << "pinned before any copy";
    rt.submit(on_gpu, versa::write(h));
    rt.wait_all();
    EXPECT_TRUE(registered(big.data()));
  }
  EXPECT_FALSE(registered(big.data()));
  {
    // Declared zero and not written back: made on the GPU, never copied, never pinned.
    std::vector<double> zeros(1 << 20);
    auto h = rt.data(zeros);
    h.declare_zero();
    h.set_write_back(false);
    rt.submit(on_gpu, versa::write(h));
    rt.wait_all();
    EXPECT_FALSE(registered(zeros.data()));
    EXPECT_EQ(rt.statistics()[1].bytes_zeroed, zeros.size() * sizeof(double));
  }
  {
    versa::PinnedHostMemory pinned = rt.pin_host_memory(big.data(), big.size() * sizeof(double));
    EXPECT_TRUE(pinned);
    EXPECT_FALSE(rt.pin_host_memory(big.data() + 10, 1024)) << "inside a pinned range";
    EXPECT_TRUE(registered(big.data() + 1000));
  }
  EXPECT_FALSE(registered(big.data()));
}
// check_after: a word the task's work leaves in device memory is read once that work has run,
// without the implementation waiting for it. A message fails the task (wait_all says it, the
// task's dependents are cancelled), an empty one lets it end; more checks than the pinned slots
// in flight are read by waiting, with the same outcomes.
TEST(CudaRuntime, DeviceWordsAreCheckedOnceTheTaskHasRun) {
  versa::Runtime rt{with_gpu()};
  SKIP_WITHOUT_GPU(rt);
  std::vector<int> word(1, 0);
  auto h = rt.data(word, "word");
  std::atomic<int> checks{0};
  std::atomic<int> last_seen{-1};
  // Fills the word with `byte` in every byte, then checks it `times` times.
  auto fill_and_check =
      versa::task_type("fill and check")
          .cuda(
              [&](versa::CudaContext& gpu, versa::Span<int> w, const int& byte, const int& times) {
                ASSERT_EQ(cudaMemsetAsync(w.data(), byte, sizeof(int), gpu.stream()), cudaSuccess);
                for (int i = 0; i < times; ++i)
                  gpu.check_after(w.data(), [&](int value) {
                    ++checks;
                    last_seen = value;
                    return value != 0 ? "the word is " + std::to_string(value) : std::string();
                  });
              })
          .placement(versa::Placement::gpu_only);
  rt.submit(fill_and_check, versa::write(h), versa::value(0), versa::value(1));
  rt.wait_all();
  EXPECT_EQ(checks.load(), 1);
  EXPECT_EQ(last_seen.load(), 0);

  rt.submit(fill_and_check, versa::write(h), versa::value(0), versa::value(300));
  rt.wait_all();
  EXPECT_EQ(checks.load(), 301) << "beyond the ring's slots too";

  std::atomic<bool> dependent_ran{false};
  rt.submit(fill_and_check, versa::write(h), versa::value(1), versa::value(1));
  rt.submit(
      "dependent", [&](versa::Span<const int>) { dependent_ran = true; }, versa::read(h));
  std::string failure;
  try {
    rt.wait_all();
  } catch (const versa::TaskFailure& e) {
    failure = e.what();
  }
  EXPECT_NE(failure.find("the word is 16843009"), std::string::npos) << failure;
  EXPECT_FALSE(dependent_ran.load()) << "the dependent of a failed check was not cancelled";
}

TEST(CudaRuntime, PinnedHandlesMayOutliveTheirRuntime) {
  std::vector<double> big(1 << 20);
  versa::Handle<double> outliving;
  versa::PinnedHostMemory pinned;
  {
    versa::Runtime rt{with_gpu()};
    SKIP_WITHOUT_GPU(rt);
    outliving = rt.data(big);
    std::vector<double> other(1 << 20);
    pinned = rt.pin_host_memory(other.data(), other.size() * sizeof(double));
    EXPECT_TRUE(pinned);
  }
  // The runtime unpinned everything when it went; these releases must not reach it.
  outliving = versa::Handle<double>();
  pinned = versa::PinnedHostMemory();
}
#endif

TEST(CudaRuntime, WithoutGpuTheRuntimeSaysSoAndRunsOnTheCpu) {
  versa::Config config = versa::testing::workers(1);
  config.gpus = -1;
  versa::Runtime rt{config};
  if (rt.device_count() > 0) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(rt.gpu_count(), 0);
  EXPECT_NE(rt.topology_summary().find("GPUs: "), std::string::npos);
  std::vector<double> x(1 << 16, 1.0);
  EXPECT_FALSE(rt.pin_host_memory(x.data(), x.size() * sizeof(double)));
  auto h = rt.data(x);
  rt.submit(
      "double",
      [](versa::Span<double> v) {
        for (double& e : v) e *= 2;
      },
      versa::write(h));
  rt.wait_all();
  EXPECT_EQ(x[100], 2.0);
}

}  // namespace
