#include "cuda/completion_poller.hpp"

#include <chrono>
#include <exception>
#include <stdexcept>
#include <utility>

#include "base/timer_slack.hpp"

namespace versa::detail {

namespace {

// How long the thread sleeps after a pass that completed nothing while work is pending. Short
// against the shortest GPU operations worth offloading (tens of microseconds), so a completion
// is seen late by a fraction of its own run time; long enough that polling does not occupy a
// core (each pass costs one cudaEventQuery per busy stream).
constexpr auto poll_interval = std::chrono::microseconds(20);

}  // namespace

CompletionPoller::CompletionPoller(int ordinal, std::string device, int streams)
    : ordinal_(ordinal), device_(std::move(device)), stream_count_(streams), fifos_(streams) {
  thread_ = std::thread([this] { run(); });
}

CompletionPoller::~CompletionPoller() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void CompletionPoller::push(int stream, PendingOperation operation) {
  bool wake;
  {
    MutexLock lock(mutex_);
    fifos_[stream].push_back(std::move(operation));
    ++pending_;
    wake = sleeping_;
  }
  if (wake) wake_.notify_one();
}

void CompletionPoller::run() {
  // The events belong to this device; querying them needs it current.
  (void)cudaSetDevice(ordinal_);
  // Each pass that finds nothing sleeps poll_interval: late wakes would delay every completion.
  use_fine_timer_slack();
  for (;;) {
    bool progressed = false;
    for (int stream = 0; stream < stream_count_; ++stream) {
      while (complete_oldest(stream)) progressed = true;
    }
    if (progressed) continue;

    MutexLock lock(mutex_);
    if (pending_ == 0) {
      // Stop only when drained: the device's destructor relies on every completion having been
      // reported when this thread ends.
      if (stopping_) return;
      sleeping_ = true;
      while (pending_ == 0 && !stopping_) wake_.wait(lock.native());
      sleeping_ = false;
    } else {
      lock.unlock();
      std::this_thread::sleep_for(poll_interval);
    }
  }
}

bool CompletionPoller::complete_oldest(int stream) {
  cudaEvent_t end = nullptr;
  {
    MutexLock lock(mutex_);
    std::deque<PendingOperation>& fifo = fifos_[stream];
    if (fifo.empty()) return false;
    end = fifo.front().end.get();
  }
  // Queried without the lock (producers keep appending meanwhile): only this thread removes
  // operations, so the oldest one stays the oldest.
  const cudaError_t status = end != nullptr ? cudaEventQuery(end) : cudaSuccess;
  if (status == cudaErrorNotReady) return false;

  PendingOperation operation;
  {
    MutexLock lock(mutex_);
    std::deque<PendingOperation>& fifo = fifos_[stream];
    operation = std::move(fifo.front());
    fifo.pop_front();
    --pending_;
  }

  OperationResult result;
  result.error = std::move(operation.error);
  result.exception = std::move(operation.exception);
  if (status != cudaSuccess) {
    // An execution error of this operation (or, for sticky errors, of any earlier work on the
    // device: CUDA reports those on every later call).
    if (result.error.empty()) result.error = describe_failure(operation.label, device_, status);
  } else if (operation.end) {
    float milliseconds = 0;
    if (cudaEventElapsedTime(&milliseconds, operation.start.get(), operation.end.get()) ==
        cudaSuccess) {
      result.seconds = milliseconds * 1e-3;
    }
  }
  // The words an implementation asked to check were copied before the end event: read now.
  for (DeviceWordCheck& word : operation.checks) {
    if (status == cudaSuccess && result.error.empty()) {
      try {
        result.error = word.check(*word.slot);
      } catch (const std::exception& thrown) {
        result.error = thrown.what();
      } catch (...) {
        result.error = describe(operation.label) + ": its check of a device word threw";
      }
      if (!result.error.empty())
        result.exception = std::make_exception_ptr(std::runtime_error(result.error));
    }
    word.slots->give_back(word.slot);
  }
  // The events go back to the pool before the completion runs: whatever the completion
  // triggers may queue the next operation and want them.
  Completion done = std::move(operation.done);
  operation.start.reset();
  operation.end.reset();
  done(std::move(result));
  return true;
}

}  // namespace versa::detail
