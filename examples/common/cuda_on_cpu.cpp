#include "cuda_on_cpu.hpp"

#include <boost/context/fiber.hpp>
#include <cstdio>
#include <cstdlib>
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

// One thread of a block: its stack, kept from block to block, and the two ends of its switches.
struct Fiber {
  Fiber() : stack(new std::byte[stack_bytes]) {
#if defined(CUDA_ON_CPU_TSAN)
    sanitizer = __tsan_create_fiber(0);
#endif
  }
  ~Fiber() {
#if defined(CUDA_ON_CPU_TSAN)
    __tsan_destroy_fiber(sanitizer);
#endif
  }
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  std::unique_ptr<std::byte[]> stack;
  context::fiber thread;     // where the thread goes on, while it waits at a barrier
  context::fiber scheduler;  // where run_grid goes on, while the thread runs
  void* sanitizer = nullptr;
  bool ended = false;
};

// Boost.Context's stack allocator for a Fiber's own stack: nothing to allocate or free.
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

// The fibers and shared memory of the launches on one OS thread, kept from one launch to the
// next. Only the thread that owns it touches it.
struct BlockRunner {
  void* scheduler_sanitizer = nullptr;
  std::vector<std::unique_ptr<Fiber>> fibers;  // as many as the largest block so far
  std::vector<std::max_align_t> shared;        // dynamic shared memory
  const std::function<void()>* body = nullptr;
  unsigned running = 0;  // the fiber that runs, while one does
};

thread_local BlockRunner runner;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "cuda_on_cpu: %s\n", what);
  std::abort();
}

void resume(unsigned t) {
  runner.running = t;
  threadIdx = {t, 0, 0};
  Fiber& fiber = *runner.fibers[t];
#if defined(CUDA_ON_CPU_TSAN)
  __tsan_switch_to_fiber(fiber.sanitizer, 0);
#endif
  fiber.thread = std::move(fiber.thread).resume();
}

}  // namespace

void run_grid(unsigned blocks, unsigned threads, std::size_t shared_bytes,
              const std::function<void()>& thread_body) {
  if (threads == 0 || threads > 1024) fail("a block has 1 to 1024 threads");
  if (runner.body) fail("a kernel launched another");
  while (runner.fibers.size() < threads) runner.fibers.push_back(std::make_unique<Fiber>());
  runner.shared.resize((shared_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
#if defined(CUDA_ON_CPU_TSAN)
  runner.scheduler_sanitizer = __tsan_get_current_fiber();
#endif
  runner.body = &thread_body;
  gridDim = {blocks, 1, 1};
  blockDim = {threads, 1, 1};
  for (unsigned b = 0; b < blocks; ++b) {
    blockIdx = {b, 0, 0};
    for (unsigned t = 0; t < threads; ++t) {
      Fiber& fiber = *runner.fibers[t];
      fiber.ended = false;
      fiber.thread = context::fiber(std::allocator_arg, KeptStack{fiber.stack.get()},
                                    [&fiber](context::fiber&& scheduler) {
                                      fiber.scheduler = std::move(scheduler);
                                      (*runner.body)();
                                      fiber.ended = true;
#if defined(CUDA_ON_CPU_TSAN)
                                      __tsan_switch_to_fiber(runner.scheduler_sanitizer, 0);
#endif
                                      return std::move(fiber.scheduler);
                                    });
    }
    // Phase by phase: each thread runs to its next barrier or its end, in thread order.
    for (unsigned alive = threads; alive > 0;) {
      alive = 0;
      for (unsigned t = 0; t < threads; ++t) {
        if (runner.fibers[t]->ended) continue;
        resume(t);
        if (!runner.fibers[t]->ended) ++alive;
      }
    }
  }
  runner.body = nullptr;
}

void* dynamic_shared_memory() { return runner.shared.data(); }

void sync_threads() {
  if (!runner.body) fail("__syncthreads outside a kernel");
  Fiber& fiber = *runner.fibers[runner.running];
#if defined(CUDA_ON_CPU_TSAN)
  __tsan_switch_to_fiber(runner.scheduler_sanitizer, 0);
#endif
  fiber.scheduler = std::move(fiber.scheduler).resume();
}

}  // namespace cuda_on_cpu
