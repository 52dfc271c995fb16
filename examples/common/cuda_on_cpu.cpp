#include "cuda_on_cpu.hpp"

#include <boost/context/fiber.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

// ThreadSanitizer follows one stack per thread unless told of the switches between fibers; told,
// it orders each fiber's phase before the next one's, as the barrier does.
#if defined(__SANITIZE_THREAD__)
#define CUDA_ON_CPU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CUDA_ON_CPU_TSAN 1
#endif
#endif
#if defined(CUDA_ON_CPU_TSAN)
extern "C" {
void* __tsan_get_current_fiber();
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
#endif

namespace cuda_on_cpu {

namespace {

namespace context = boost::context;

// Enough for the kernels' frames, also in sanitizer builds, which make them larger.
constexpr std::size_t stack_bytes = 256 << 10;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "cuda_on_cpu: %s\n", what);
  std::abort();
}

// One thread position of every block that the launches on one OS thread run: a fiber that runs
// the kernel's thread body once per block and waits for the next block between them, made once
// (with its stack) and kept, so that ThreadSanitizer's record of its stack stays balanced. Made,
// run and destroyed on that OS thread only.
class Fiber {
 public:
  Fiber(const std::function<void()>* const* body, void* scheduler_sanitizer)
      : stack_(new std::byte[stack_bytes]), scheduler_sanitizer_(scheduler_sanitizer) {
#if defined(CUDA_ON_CPU_TSAN)
    sanitizer_ = __tsan_create_fiber(0);
#endif
    thread_ = context::fiber(std::allocator_arg, KeptStack{stack_.get()},
                             [this, body](context::fiber&& scheduler) {
                               scheduler_ = std::move(scheduler);
                               while (!stopping_) {
                                 (**body)();
                                 ended_ = true;
                                 wait();
                               }
                               to_scheduler();
                               return std::move(scheduler_);
                             });
  }
  ~Fiber() {
    if (thread_) {  // waiting for a next block: let the loop end
      stopping_ = true;
      resume();
    }
#if defined(CUDA_ON_CPU_TSAN)
    __tsan_destroy_fiber(sanitizer_);
#endif
  }
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // The scheduler's side: runs the thread until its next barrier or the end of its body.
  void resume() {
#if defined(CUDA_ON_CPU_TSAN)
    __tsan_switch_to_fiber(sanitizer_, 0);
#endif
    thread_ = std::move(thread_).resume();
  }
  // The thread's side: goes back to the scheduler until it resumes this thread.
  void wait() {
    to_scheduler();
    scheduler_ = std::move(scheduler_).resume();
  }

  void start_block() { ended_ = false; }
  bool ended() const { return ended_; }

 private:
  // Boost.Context's stack allocator for the fiber's own stack: nothing to allocate or free.
  struct KeptStack {
    std::byte* memory;
    context::stack_context allocate() {
      context::stack_context stack;
      stack.size = stack_bytes;
      stack.sp = memory + stack_bytes;  // stacks grow down
      return stack;
    }
    void deallocate(context::stack_context&) noexcept {}
  };

  void to_scheduler() {
#if defined(CUDA_ON_CPU_TSAN)
    __tsan_switch_to_fiber(scheduler_sanitizer_, 0);
#endif
  }

  std::unique_ptr<std::byte[]> stack_;
  context::fiber thread_;     // where the thread goes on, while it waits
  context::fiber scheduler_;  // where run_grid goes on, while the thread runs
  void* sanitizer_ = nullptr;
  void* scheduler_sanitizer_;
  bool ended_ = false;  // its body has run in this block
  bool stopping_ = false;
};

// The fibers and shared memory of the launches on one OS thread, kept from one launch to the
// next. Only the thread that owns it touches it.
struct BlockRunner {
  BlockRunner() {
#if defined(CUDA_ON_CPU_TSAN)
    scheduler_sanitizer = __tsan_get_current_fiber();
#endif
  }

  const std::function<void()>* body = nullptr;
  void* scheduler_sanitizer = nullptr;
  std::vector<std::unique_ptr<Fiber>> fibers;  // as many as the largest block so far
  std::vector<std::max_align_t> shared;        // dynamic shared memory
  unsigned running = 0;                        // the fiber that runs, while one does
};

thread_local BlockRunner runner;

}  // namespace

void run_grid(unsigned blocks, unsigned threads, std::size_t shared_bytes,
              const std::function<void()>& thread_body) {
  if (threads == 0 || threads > 1024) fail("a block has 1 to 1024 threads");
  if (runner.body) fail("a kernel launched another");
  while (runner.fibers.size() < threads)
    runner.fibers.push_back(std::make_unique<Fiber>(&runner.body, runner.scheduler_sanitizer));
  runner.shared.resize((shared_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
  runner.body = &thread_body;
  gridDim = {blocks, 1, 1};
  blockDim = {threads, 1, 1};
  for (unsigned b = 0; b < blocks; ++b) {
    blockIdx = {b, 0, 0};
    // A block's shared memory starts undefined: all ones (a NaN in every double), so that a read
    // before any thread of this block wrote shows rather than finding the block before's value.
    if (!runner.shared.empty())  // data() may be null then, which memset may not be given
      std::memset(runner.shared.data(), 0xff, runner.shared.size() * sizeof(std::max_align_t));
    for (unsigned t = 0; t < threads; ++t) runner.fibers[t]->start_block();
    // Phase by phase: each thread runs to its next barrier or its end, in thread order.
    for (bool waiting = true; waiting;) {
      waiting = false;
      for (unsigned t = 0; t < threads; ++t) {
        Fiber& fiber = *runner.fibers[t];
        if (fiber.ended()) continue;
        runner.running = t;
        threadIdx = {t, 0, 0};
        fiber.resume();
        waiting = waiting || !fiber.ended();
      }
    }
  }
  runner.body = nullptr;
}

void* dynamic_shared_memory() { return runner.shared.data(); }

void sync_threads() {
  if (!runner.body) fail("__syncthreads outside a kernel");
  runner.fibers[runner.running]->wait();
}

}  // namespace cuda_on_cpu
