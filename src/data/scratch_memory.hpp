// The host memory of a scratch handle (Runtime::scratch): allocated by the runtime, zeroed by
// the system, owned by the handle's state and freed with it, and counted while it lives.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>

namespace versa::detail {

class ScratchMemory {
 public:
  // The bytes of every block alive; shared by the runtime that reports it and the blocks, which
  // may outlive the runtime in handles destroyed after it.
  using Counter = std::shared_ptr<std::atomic<std::size_t>>;

  // `bytes` zeroed bytes, counted in `counter`. calloc: a large block comes from the system
  // already zero and its pages cost nothing until something touches them, which for data that
  // only tasks on devices use is never. Throws std::bad_alloc.
  ScratchMemory(std::size_t bytes, Counter counter)
      : data_(bytes == 0 ? nullptr : std::calloc(bytes, 1)),
        bytes_(bytes),
        counter_(std::move(counter)) {
    if (bytes != 0 && !data_) throw std::bad_alloc();
    counter_->fetch_add(bytes, std::memory_order_relaxed);
  }
  ~ScratchMemory() {
    std::free(data_);
    counter_->fetch_sub(bytes_, std::memory_order_relaxed);
  }
  ScratchMemory(const ScratchMemory&) = delete;
  ScratchMemory& operator=(const ScratchMemory&) = delete;

  void* data() const { return data_; }

 private:
  void* const data_;
  const std::size_t bytes_;
  const Counter counter_;
};

}  // namespace versa::detail
