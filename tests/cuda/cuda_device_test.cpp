// The CUDA device at the Device interface: memory, pitched copies both ways, task
// implementations using cuBLAS, cuSOLVER and the workspace, failures reported through the
// completion, and completions that arrive once each, on the device's own thread. Every test
// that needs a GPU skips when there is none (or when the backend is not built). The progress
// thread's bookkeeping is also tested on its own, which needs no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "device/device.hpp"
#include "device/device_registry.hpp"

#if VERSA_HAVE_CUDA

#include <atomic>
#include <chrono>
#include <cstddef>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/task.hpp"
#include "cuda/completion_poller.hpp"
#include "cuda/cuda_device.hpp"
#include "versa/cuda.hpp"

namespace {

using ::testing::HasSubstr;
using versa::AccessMode;
using versa::detail::AccessRecord;
using versa::detail::BlockCopy;
using versa::detail::Completion;
using versa::detail::CompletionPoller;
using versa::detail::Device;
using versa::detail::DeviceKind;
using versa::detail::Layout;
using versa::detail::open_cuda_devices;
using versa::detail::OperationResult;
using versa::detail::PendingOperation;
using versa::detail::Task;

// The GPUs to open: `gpus` as in Config::gpus, links measured and kept nowhere (the tests leave
// no file behind).
versa::Config gpu_config(int gpus, std::size_t memory_limit = 0) {
  versa::Config config;
  config.gpus = gpus;
  config.device_memory_limit = memory_limit;
  config.link_cost_file = "none";
  return config;
}

// Generous: a completion normally takes microseconds, but the first use of cuBLAS or cuSOLVER
// loads their kernels.
constexpr auto completion_timeout = std::chrono::seconds(30);

// What a completion reported, and on which thread.
struct Outcome {
  OperationResult result;
  std::thread::id thread;
};

// One expected completion. The state is shared with the callback, so an assertion that ends a
// test early leaves nothing dangling for a completion that arrives later.
class CompletionProbe {
 public:
  Completion completion() {
    return [state = state_](OperationResult result) {
      if (state->calls.fetch_add(1) == 0) {
        state->outcome.set_value(Outcome{std::move(result), std::this_thread::get_id()});
      }
    };
  }
  // The outcome, or nothing when no completion came within the timeout.
  std::optional<Outcome> wait() {
    std::future<Outcome> future = state_->outcome.get_future();
    if (future.wait_for(completion_timeout) != std::future_status::ready) return std::nullopt;
    return future.get();
  }
  int calls() const { return state_->calls.load(); }

 private:
  struct State {
    std::promise<Outcome> outcome;
    std::atomic<int> calls{0};
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

// Device memory that is given back when the test ends, however it ends.
class DeviceBuffer {
 public:
  DeviceBuffer(Device& device, std::size_t bytes)
      : device_(device), pointer_(device.allocate(bytes)) {}
  ~DeviceBuffer() { device_.deallocate(pointer_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return pointer_; }

 private:
  Device& device_;
  void* pointer_;
};

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string note;
    std::vector<std::unique_ptr<Device>> devices = open_cuda_devices(gpu_config(1), note);
    if (devices.empty()) GTEST_SKIP() << "no GPU to test on: " << note;
    device_ = std::move(devices.front());
  }

  // Runs one operation queued by `queue_with` to completion and returns what it reported.
  template <class Queue>
  OperationResult run(Queue&& queue_with) {
    CompletionProbe probe;
    queue_with(probe.completion());
    std::optional<Outcome> outcome = probe.wait();
    if (!outcome) {
      ADD_FAILURE() << "no completion within the timeout";
      return OperationResult{"timed out", nullptr, 0};
    }
    EXPECT_NE(outcome->thread, std::this_thread::get_id());
    return std::move(outcome->result);
  }

  // Contiguous copies of `bytes` between the host and `device` (the fixture's by default);
  // fail the test on error.
  void upload(void* device_data, const void* host_data, std::size_t bytes,
              Device* device = nullptr) {
    const BlockCopy copy{device_data, bytes, host_data, bytes, bytes, 1};
    Device& to = device ? *device : *device_;
    const OperationResult result =
        run([&](Completion done) { to.copy_to_device(copy, std::move(done)); });
    EXPECT_EQ(result.error, "");
  }
  void download(void* host_data, const void* device_data, std::size_t bytes,
                Device* device = nullptr) {
    const BlockCopy copy{host_data, bytes, device_data, bytes, bytes, 1};
    Device& from = device ? *device : *device_;
    const OperationResult result =
        run([&](Completion done) { from.copy_to_host(copy, std::move(done)); });
    EXPECT_EQ(result.error, "");
  }

  std::unique_ptr<Device> device_;
};

// A task with one access to `data`, laid out as `layout`, whose CUDA implementation is
// `invoke_cuda` with `closure`.
struct HandMadeTask {
  HandMadeTask(const char* name, versa::detail::InvokeCudaFn invoke_cuda, void* closure, void* data,
               const Layout& layout) {
    record.data = data;
    record.layout = &layout;
    record.mode = AccessMode::write;
    task.name = name;
    task.invoke_cuda = invoke_cuda;
    task.closure = closure;
    task.accesses = &record;
    task.access_count = 1;
  }
  AccessRecord record;
  Task task;
};

void scale_with_cublas(void* closure, const AccessRecord* accesses, versa::CudaContext& gpu) {
  const double alpha = *static_cast<const double*>(closure);
  const int n = static_cast<int>(accesses[0].layout->rows);
  const cublasStatus_t status =
      cublasDscal(gpu.cublas(), n, &alpha, static_cast<double*>(accesses[0].data), 1);
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasDscal failed");
}

void factor_with_cusolver(void*, const AccessRecord* accesses, versa::CudaContext& gpu) {
  const Layout& layout = *accesses[0].layout;
  const int n = static_cast<int>(layout.rows);
  const int ld = static_cast<int>(layout.ld);
  double* a = static_cast<double*>(accesses[0].data);
  int lwork = 0;
  if (cusolverDnDpotrf_bufferSize(gpu.cusolver(), CUBLAS_FILL_MODE_LOWER, n, a, ld, &lwork) !=
      CUSOLVER_STATUS_SUCCESS) {
    throw std::runtime_error("cusolverDnDpotrf_bufferSize failed");
  }
  // The workspace, then the info word.
  const std::size_t work_bytes = static_cast<std::size_t>(lwork) * sizeof(double);
  auto* workspace = static_cast<std::byte*>(gpu.workspace(work_bytes + sizeof(double)));
  if (cusolverDnDpotrf(gpu.cusolver(), CUBLAS_FILL_MODE_LOWER, n, a, ld,
                       reinterpret_cast<double*>(workspace), lwork,
                       reinterpret_cast<int*>(workspace + work_bytes)) != CUSOLVER_STATUS_SUCCESS) {
    throw std::runtime_error("cusolverDnDpotrf failed");
  }
}

void throw_from_implementation(void*, const AccessRecord*, versa::CudaContext&) {
  throw std::runtime_error("implementation gave up");
}

TEST_F(CudaDeviceTest, DescribesItself) {
  EXPECT_EQ(device_->kind(), DeviceKind::cuda);
  EXPECT_EQ(device_->name().rfind("cuda:0 (", 0), 0u) << device_->name();
  EXPECT_EQ(device_->streams(), 4);
  EXPECT_GT(device_->memory_capacity(), 0u);
  EXPECT_GT(device_->bandwidth(), 0);
  EXPECT_GT(device_->latency(), 0);
}

TEST_F(CudaDeviceTest, AllocatesAndFreesMemoryAndReportsExhaustionAsNull) {
  void* small = device_->allocate(std::size_t{1} << 20);
  ASSERT_NE(small, nullptr);
  // 1 EiB exceeds any GPU; the failure must not linger and spoil the next allocation.
  EXPECT_EQ(device_->allocate(std::size_t{1} << 60), nullptr);
  void* after_failure = device_->allocate(4096);
  EXPECT_NE(after_failure, nullptr);
  device_->deallocate(after_failure);
  device_->deallocate(small);
}

TEST_F(CudaDeviceTest, CopiesAPitchedSubBlockThereAndBack) {
  // A 5 x 4 block at row 2, column 1 of a 10 x 8 column-major matrix, kept on the device with a
  // leading dimension of 8.
  constexpr std::size_t host_ld = 10, host_cols = 8, rows = 5, cols = 4, device_ld = 8;
  std::vector<double> source(host_ld * host_cols);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<double>(i) + 0.5;
  std::vector<double> back(host_ld * host_cols, -1.0);
  device_->register_host_memory(source.data(), source.size() * sizeof(double));
  DeviceBuffer block(*device_, device_ld * cols * sizeof(double));
  ASSERT_NE(block.get(), nullptr);

  const std::size_t offset = 2 + 1 * host_ld;
  const BlockCopy there{block.get(),
                        device_ld * sizeof(double),
                        source.data() + offset,
                        host_ld * sizeof(double),
                        rows * sizeof(double),
                        cols};
  OperationResult result =
      run([&](Completion done) { device_->copy_to_device(there, std::move(done)); });
  EXPECT_EQ(result.error, "");
  EXPECT_EQ(result.exception, nullptr);
  EXPECT_GE(result.seconds, 0);

  const BlockCopy home{back.data() + offset,       host_ld * sizeof(double), block.get(),
                       device_ld * sizeof(double), rows * sizeof(double),    cols};
  result = run([&](Completion done) { device_->copy_to_host(home, std::move(done)); });
  EXPECT_EQ(result.error, "");
  device_->unregister_host_memory(source.data());

  for (std::size_t col = 0; col < host_cols; ++col) {
    for (std::size_t row = 0; row < host_ld; ++row) {
      const bool inside = row >= 2 && row < 2 + rows && col >= 1 && col < 1 + cols;
      const double expected = inside ? source[row + col * host_ld] : -1.0;
      EXPECT_EQ(back[row + col * host_ld], expected) << "row " << row << ", column " << col;
    }
  }
}

TEST_F(CudaDeviceTest, ExecutesACublasImplementationOnTheStream) {
  constexpr std::size_t n = 1000;
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<double>(i);
  DeviceBuffer x(*device_, n * sizeof(double));
  ASSERT_NE(x.get(), nullptr);
  upload(x.get(), values.data(), n * sizeof(double));

  double alpha = 2.0;
  const Layout layout{n, 1, n, sizeof(double)};
  HandMadeTask scale("dscal", &scale_with_cublas, &alpha, x.get(), layout);
  const OperationResult result =
      run([&](Completion done) { device_->execute(3, scale.task, std::move(done)); });
  EXPECT_EQ(result.error, "");
  EXPECT_EQ(result.exception, nullptr);
  EXPECT_GE(result.seconds, 0);

  download(values.data(), x.get(), n * sizeof(double));
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(values[i], 2.0 * static_cast<double>(i)) << i;
}

// The priority of the stream an implementation is given.
void record_stream_priority(void* closure, const AccessRecord*, versa::CudaContext& gpu) {
  if (cudaStreamGetPriority(gpu.stream(), static_cast<int*>(closure)) != cudaSuccess)
    throw std::runtime_error("cudaStreamGetPriority failed");
}

// As many high-priority streams as kernel streams, after them: an implementation queued there
// runs on a stream of the GPU's highest priority, one queued on a kernel stream on the default.
TEST_F(CudaDeviceTest, HighPriorityStreamsHaveTheGpusHighestPriority) {
  ASSERT_EQ(device_->priority_streams(), device_->streams());
  int least = 0, greatest = 0;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  DeviceBuffer data(*device_, 64);
  const Layout layout{8, 1, 8, sizeof(double)};
  for (const int stream : {0, device_->streams(), 2 * device_->streams() - 1}) {
    int priority = 1000;
    HandMadeTask probe("probe", &record_stream_priority, &priority, data.get(), layout);
    const OperationResult result =
        run([&](Completion done) { device_->execute(stream, probe.task, std::move(done)); });
    EXPECT_EQ(result.error, "") << "stream " << stream;
    EXPECT_EQ(priority, stream < device_->streams() ? least : greatest) << "stream " << stream;
  }
  versa::Config config = gpu_config(1);
  config.cuda_priority_streams = false;
  std::string note;
  const std::vector<std::unique_ptr<Device>> without = open_cuda_devices(config, note);
  ASSERT_EQ(without.size(), 1u) << note;
  EXPECT_EQ(without.front()->priority_streams(), 0);
}

// Holds its stream until the test lets it go (or 5 s have passed: then `timed_out`).
struct StreamHold {
  std::atomic<bool> released{false};
  std::atomic<bool> started{false};
  std::atomic<bool> timed_out{false};

  static void wait(void* self) {
    auto& hold = *static_cast<StreamHold*>(self);
    hold.started = true;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!hold.released && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    hold.timed_out = !hold.released;
  }
};

void hold_stream(void* closure, const AccessRecord*, versa::CudaContext& gpu) {
  if (cudaLaunchHostFunc(gpu.stream(), &StreamHold::wait, closure) != cudaSuccess)
    throw std::runtime_error("cudaLaunchHostFunc failed");
}

// Buffers come from the device's memory pool in stream order: allocating and freeing while a
// stream is held returns at once, where cudaFree would wait for the whole device (and here for
// the hold's 5 s). Without the pool (Config::cuda_memory_pool off) the device says so.
TEST_F(CudaDeviceTest, AllocatesAndFreesFromItsPoolWithoutWaitingForTheStreams) {
  auto& gpu = static_cast<versa::detail::CudaDevice&>(*device_);
  ASSERT_TRUE(gpu.pooled_memory()) << "this GPU has memory pools";
  DeviceBuffer data(*device_, 64);
  const Layout layout{8, 1, 8, sizeof(double)};
  StreamHold hold;
  HandMadeTask probe("hold", &hold_stream, &hold, data.get(), layout);
  CompletionProbe held;
  device_->execute(0, probe.task, held.completion());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!hold.started && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  ASSERT_TRUE(hold.started) << "the stream was not held";
  for (int round = 0; round < 4; ++round) {
    void* buffer = device_->allocate(std::size_t{64} << 20);
    ASSERT_NE(buffer, nullptr);
    device_->deallocate(buffer);
  }
  hold.released = true;
  const std::optional<Outcome> outcome = held.wait();
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->result.error, "");
  EXPECT_FALSE(hold.timed_out) << "an allocation or a free waited for the held stream";

  versa::Config config = gpu_config(1);
  config.cuda_memory_pool = false;
  std::string note;
  const std::vector<std::unique_ptr<Device>> without = open_cuda_devices(config, note);
  ASSERT_EQ(without.size(), 1u) << note;
  EXPECT_FALSE(static_cast<versa::detail::CudaDevice&>(*without.front()).pooled_memory());
  void* buffer = without.front()->allocate(4096);
  EXPECT_NE(buffer, nullptr);
  without.front()->deallocate(buffer);
}

TEST_F(CudaDeviceTest, ExecutesACusolverImplementationUsingTheWorkspace) {
  // [4 2; 2 5] = L L^T with L = [2 0; 1 2]; the upper triangle is left alone.
  std::vector<double> a = {4, 2, 2, 5};
  DeviceBuffer matrix(*device_, a.size() * sizeof(double));
  ASSERT_NE(matrix.get(), nullptr);
  upload(matrix.get(), a.data(), a.size() * sizeof(double));

  const Layout layout{2, 2, 2, sizeof(double)};
  HandMadeTask potrf("potrf", &factor_with_cusolver, nullptr, matrix.get(), layout);
  const OperationResult result =
      run([&](Completion done) { device_->execute(0, potrf.task, std::move(done)); });
  EXPECT_EQ(result.error, "");

  download(a.data(), matrix.get(), a.size() * sizeof(double));
  EXPECT_DOUBLE_EQ(a[0], 2.0);
  EXPECT_DOUBLE_EQ(a[1], 1.0);
  EXPECT_DOUBLE_EQ(a[2], 2.0);
  EXPECT_DOUBLE_EQ(a[3], 2.0);
}

// With Config::cuda_panel_sms, the high-priority streams run on a partition of the GPU's SMs and
// the other kernel streams on the rest: the two add up to the GPU's SMs, the panel's holds at
// least what was asked, the start-up note says so, and cuSOLVER (on a high-priority stream) and
// cuBLAS (on a kernel stream) compute right on both. Asking for every SM leaves none for the
// other streams: the GPU is not opened, and the note says why.
TEST_F(CudaDeviceTest, PanelSmsSplitTheGpuBetweenTheTwoKindsOfStream) {
  versa::Config config = gpu_config(1);
  config.cuda_panel_sms = 8;
  std::string note;
  const std::vector<std::unique_ptr<Device>> split = open_cuda_devices(config, note);
  ASSERT_EQ(split.size(), 1u) << note;
  Device& device = *split.front();
  const auto& gpu = static_cast<const versa::detail::CudaDevice&>(device);
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu.ordinal()),
            cudaSuccess);
  EXPECT_GE(gpu.panel_sms(), 8);
  EXPECT_GT(gpu.other_sms(), 0);
  EXPECT_EQ(gpu.panel_sms() + gpu.other_sms(), sms);
  EXPECT_THAT(note, HasSubstr("panel on " + std::to_string(gpu.panel_sms()) + " SMs"));

  std::vector<double> a = {4, 2, 2, 5};
  const std::size_t a_bytes = a.size() * sizeof(double);
  DeviceBuffer matrix(device, a_bytes);
  upload(matrix.get(), a.data(), a_bytes, &device);
  const Layout square{2, 2, 2, sizeof(double)};
  HandMadeTask potrf("potrf", &factor_with_cusolver, nullptr, matrix.get(), square);
  EXPECT_EQ(run([&](Completion done) {
              device.execute(device.streams(), potrf.task, std::move(done));
            }).error,
            "");
  download(a.data(), matrix.get(), a_bytes, &device);
  EXPECT_EQ(a, (std::vector<double>{2, 1, 2, 2}));

  std::vector<double> x = {1, 2, 3};
  DeviceBuffer vector(device, x.size() * sizeof(double));
  upload(vector.get(), x.data(), x.size() * sizeof(double), &device);
  double alpha = -1.0;
  const Layout column{3, 1, 3, sizeof(double)};
  HandMadeTask scale("dscal", &scale_with_cublas, &alpha, vector.get(), column);
  EXPECT_EQ(run([&](Completion done) { device.execute(0, scale.task, std::move(done)); }).error,
            "");
  download(x.data(), vector.get(), x.size() * sizeof(double), &device);
  EXPECT_EQ(x, (std::vector<double>{-1, -2, -3}));

  config.cuda_panel_sms = sms;
  const std::vector<std::unique_ptr<Device>> none = open_cuda_devices(config, note);
  EXPECT_TRUE(none.empty());
  EXPECT_THAT(note, HasSubstr("Config::cuda_panel_sms"));
}

TEST_F(CudaDeviceTest, ReportsAnExceptionFromTheImplementation) {
  DeviceBuffer data(*device_, 64);
  const Layout layout{8, 1, 8, sizeof(double)};
  HandMadeTask failing("failing", &throw_from_implementation, nullptr, data.get(), layout);
  const OperationResult result =
      run([&](Completion done) { device_->execute(0, failing.task, std::move(done)); });
  EXPECT_EQ(result.error, "implementation gave up");
  ASSERT_NE(result.exception, nullptr);
  EXPECT_THROW(std::rethrow_exception(result.exception), std::runtime_error);
}

TEST_F(CudaDeviceTest, ReportsAFailedCopyNamingTheDeviceAndTheOperation) {
  // Pitches narrower than the columns: cudaMemcpy2DAsync rejects the copy when it is queued.
  std::vector<double> host(64);
  DeviceBuffer data(*device_, host.size() * sizeof(double));
  const BlockCopy invalid{data.get(), 8, host.data(), 8, 64, 2};
  const OperationResult result =
      run([&](Completion done) { device_->copy_to_device(invalid, std::move(done)); });
  EXPECT_NE(result.error.find("host->device"), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("on cuda:0 failed"), std::string::npos) << result.error;

  // The device stays usable.
  upload(data.get(), host.data(), host.size() * sizeof(double));
}

TEST_F(CudaDeviceTest, CallsEachCompletionOnceOnTheDeviceThread) {
  // Four threads queue copies on their own stream each, and one more on a shared stream.
  constexpr int threads = 4, copies_per_thread = 50;
  constexpr std::size_t doubles = 4096;
  std::vector<double> host(doubles, 1.0);
  DeviceBuffer data(*device_, threads * doubles * sizeof(double));
  ASSERT_NE(data.get(), nullptr);

  std::vector<CompletionProbe> probes(threads * copies_per_thread * 2);
  std::vector<std::thread> queueing;
  for (int t = 0; t < threads; ++t) {
    queueing.emplace_back([&, t] {
      void* slice = static_cast<double*>(data.get()) + t * doubles;
      const BlockCopy copy{slice,
                           doubles * sizeof(double),
                           host.data(),
                           doubles * sizeof(double),
                           doubles * sizeof(double),
                           1};
      for (int i = 0; i < copies_per_thread; ++i) {
        const int own = (t * copies_per_thread + i) * 2;
        device_->copy_to_device(copy, probes[own].completion());
        device_->copy_to_device(copy, probes[own + 1].completion());
      }
    });
  }
  for (std::thread& thread : queueing) thread.join();

  for (CompletionProbe& probe : probes) {
    std::optional<Outcome> outcome = probe.wait();
    ASSERT_TRUE(outcome) << "a completion did not arrive";
    EXPECT_EQ(outcome->result.error, "");
    EXPECT_NE(outcome->thread, std::this_thread::get_id());
  }
  // A duplicate would follow shortly after the first call, if at all.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (const CompletionProbe& probe : probes) EXPECT_EQ(probe.calls(), 1);
}

// Operations without an end event (those whose queueing failed) complete without any CUDA
// call, so the progress thread's FIFOs, wake-ups and shutdown can be tested without a GPU.
PendingOperation failed_operation(std::string error, Completion done) {
  PendingOperation operation;
  operation.label.operation = "test";
  operation.error = std::move(error);
  operation.done = std::move(done);
  return operation;
}

TEST(CompletionPollerTest, ReportsEachOperationOnceInStreamOrderOnItsOwnThread) {
  constexpr int streams = 3, per_stream = 200;
  struct Report {
    int stream;
    int index;
    std::string error;
    std::thread::id thread;
  };
  std::mutex mutex;
  std::vector<Report> reports;
  {
    CompletionPoller poller(0, "cuda:0", streams);
    // One pushing thread per stream, as the device's per-stream queue locks arrange.
    std::vector<std::thread> pushers;
    for (int stream = 0; stream < streams; ++stream) {
      pushers.emplace_back([&, stream] {
        for (int index = 0; index < per_stream; ++index) {
          poller.push(
              stream,
              failed_operation(std::to_string(index), [&, stream, index](OperationResult result) {
                std::lock_guard<std::mutex> lock(mutex);
                reports.push_back(
                    Report{stream, index, std::move(result.error), std::this_thread::get_id()});
              }));
        }
      });
    }
    for (std::thread& pusher : pushers) pusher.join();
  }  // the destructor returns once every operation has been reported

  ASSERT_EQ(reports.size(), static_cast<std::size_t>(streams * per_stream));
  std::vector<int> next(streams, 0);
  for (const Report& report : reports) {
    EXPECT_EQ(report.index, next[report.stream]) << "stream " << report.stream;
    EXPECT_EQ(report.error, std::to_string(report.index));
    EXPECT_NE(report.thread, std::this_thread::get_id());
    next[report.stream] = report.index + 1;
  }
}

TEST(CompletionPollerTest, WakesUpForWorkPushedAfterItWentToSleep) {
  CompletionPoller poller(0, "cuda:0", 1);
  for (int round = 0; round < 20; ++round) {
    CompletionProbe probe;
    poller.push(0, failed_operation("round " + std::to_string(round), probe.completion()));
    std::optional<Outcome> outcome = probe.wait();
    ASSERT_TRUE(outcome) << "round " << round;
    EXPECT_EQ(outcome->result.error, "round " + std::to_string(round));
    // Long enough for the thread to find nothing pending and sleep.
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 2 == 0 ? 2 : 0));
  }
}

TEST(OpenCudaDevicesTest, SaysWhatItFound) {
  std::string note;
  std::vector<std::unique_ptr<Device>> devices = open_cuda_devices(gpu_config(-1), note);
  EXPECT_FALSE(note.empty());
  if (devices.empty()) {
    EXPECT_NE(note.find("no GPU"), std::string::npos) << note;
  } else {
    EXPECT_NE(note.find("cuda:0 ("), std::string::npos) << note;
    // A limit caps the capacity the runtime may use.
    std::vector<std::unique_ptr<Device>> capped =
        open_cuda_devices(gpu_config(1, std::size_t{1} << 20), note);
    ASSERT_EQ(capped.size(), 1u);
    EXPECT_EQ(capped.front()->memory_capacity(), std::size_t{1} << 20);
  }
  EXPECT_TRUE(open_cuda_devices(gpu_config(0), note).empty());
}

// Config::cuda_devices naming GPU 0 twice: two devices that share its memory and copy between
// each other without the host.
TEST(OpenCudaDevicesTest, OneGpuNamedTwiceIsTwoDevicesWithAPeerLink) {
  versa::Config config = gpu_config(-1);
  std::string note;
  const std::vector<std::unique_ptr<Device>> whole = open_cuda_devices(config, note);
  if (whole.empty()) GTEST_SKIP() << "no GPU to test on: " << note;
  const std::size_t whole_capacity = whole.front()->memory_capacity();
  config.cuda_devices = {0, 0, 63};
  const std::vector<std::unique_ptr<Device>> devices = open_cuda_devices(config, note);
  ASSERT_EQ(devices.size(), 2u) << note;
  EXPECT_NE(note.find("cuda:63 not used: no such GPU"), std::string::npos) << note;
  Device& first = *devices[0];
  Device& second = *devices[1];
  EXPECT_EQ(first.name().rfind("cuda:0.0 (", 0), 0u) << first.name();
  EXPECT_EQ(second.name().rfind("cuda:0.1 (", 0), 0u) << second.name();
  // Each takes about half of what one device alone would (the free memory moves a little).
  EXPECT_LT(first.memory_capacity(), whole_capacity / 10 * 6);
  EXPECT_GT(first.memory_capacity(), whole_capacity / 10 * 4);
  ASSERT_TRUE(first.has_peer_link(second));
  ASSERT_TRUE(second.has_peer_link(first));
  EXPECT_GT(second.peer_bandwidth(first), 0);
  EXPECT_GT(second.peer_latency(first), 0);

  // Host -> first, first -> second over the link, second -> host.
  constexpr std::size_t count = 1 << 16;
  constexpr std::size_t bytes = count * sizeof(double);
  std::vector<double> data(count);
  for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<double>(i) * 0.25 - 7;
  std::vector<double> back(count, 0.0);
  DeviceBuffer on_first(first, bytes);
  DeviceBuffer on_second(second, bytes);
  ASSERT_NE(on_first.get(), nullptr);
  ASSERT_NE(on_second.get(), nullptr);
  auto run = [](auto&& queue_with) {
    CompletionProbe probe;
    queue_with(probe.completion());
    const std::optional<Outcome> outcome = probe.wait();
    return outcome ? outcome->result.error : std::string("timed out");
  };
  EXPECT_EQ(run([&](Completion done) {
              first.copy_to_device({on_first.get(), bytes, data.data(), bytes, bytes, 1},
                                   std::move(done));
            }),
            "");
  EXPECT_EQ(run([&](Completion done) {
              second.copy_from_peer(first,
                                    {on_second.get(), bytes, on_first.get(), bytes, bytes, 1},
                                    std::move(done));
            }),
            "");
  EXPECT_EQ(run([&](Completion done) {
              second.copy_to_host({back.data(), bytes, on_second.get(), bytes, bytes, 1},
                                  std::move(done));
            }),
            "");
  EXPECT_EQ(back, data);
}

}  // namespace

#else  // !VERSA_HAVE_CUDA

namespace {

TEST(OpenCudaDevicesTest, SaysTheBackendIsNotBuilt) {
  std::vector<std::unique_ptr<versa::detail::Device>> devices;
  EXPECT_EQ(versa::detail::cuda_device_kind().open(versa::Config{}, devices),
            "GPUs: CUDA backend not built");
  EXPECT_TRUE(devices.empty());
}

}  // namespace

#endif  // VERSA_HAVE_CUDA
