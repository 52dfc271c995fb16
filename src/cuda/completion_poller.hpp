// The progress thread of a CUDA device: it notices when queued operations have completed and
// reports them. CUDA offers stream callbacks (cudaLaunchHostFunc) for this, but a callback may
// not call CUDA, so it could neither measure the elapsed time nor let the completion handler
// queue follow-up work safely; polling events from a thread of our own has neither limit.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"
#include "cuda/pending_operation.hpp"

namespace versa::detail {

class CompletionPoller {
 public:
  // Starts the thread for device `ordinal` (called `device` in messages, "cuda:0") with one
  // FIFO of pending operations per stream.
  CompletionPoller(int ordinal, std::string device, int streams);
  // Waits until every pushed operation has completed and been reported, then joins the thread.
  ~CompletionPoller();
  CompletionPoller(const CompletionPoller&) = delete;
  CompletionPoller& operator=(const CompletionPoller&) = delete;

  // Hands over an operation queued on `stream`; its `done` is called exactly once, on the
  // progress thread, when its end event has completed (at once when it has none). Thread-safe.
  // Precondition: the operations of one stream are pushed in the order they were queued on it,
  // since only the oldest of each stream is polled (the device pushes under the stream's queue
  // lock).
  void push(int stream, PendingOperation operation);

 private:
  void run();
  // Reports the oldest operation of `stream` if it has completed; false when there is none or
  // it is still running.
  bool complete_oldest(int stream);

  const int ordinal_;
  const std::string device_;
  const int stream_count_;

  Mutex mutex_;
  std::condition_variable wake_;  // signalled on push and on stop while the thread sleeps
  std::vector<std::deque<PendingOperation>> fifos_ VERSA_GUARDED_BY(mutex_);  // one per stream
  std::size_t pending_ VERSA_GUARDED_BY(mutex_) = 0;  // operations in all FIFOs
  bool sleeping_ VERSA_GUARDED_BY(mutex_) = false;    // the thread waits on wake_
  bool stopping_ VERSA_GUARDED_BY(mutex_) = false;

  std::thread thread_;  // last: started once the state above exists
};

}  // namespace versa::detail
