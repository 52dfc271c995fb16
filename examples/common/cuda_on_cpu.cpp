#include "cuda_on_cpu.hpp"

#include <atomic>
#include <boost/context/fiber.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

// ThreadSanitizer follows one stack per thread unless told of the switches between fibers. Each
// thread of a block is a fiber that it knows, and it is told what CUDA orders and no more
// (BlockOrder), so that it reports what a GPU may do differently from the order here: two
// threads of a block that touch the same memory, one writing, without a barrier between.
#if defined(CUDA_ON_CPU_TSAN)
extern "C" {
void* __tsan_get_current_fiber();
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
void __tsan_acquire(void* address);
void __tsan_release(void* address);
void AnnotateIgnoreWritesBegin(const char* file, int line);
void AnnotateIgnoreWritesEnd(const char* file, int line);
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

// Whether ThreadSanitizer orders a switch between fibers: what comes before it before what comes
// after. The switches of a block's phases do not, as nothing orders a GPU's threads between
// barriers; BlockOrder says what does.
enum class SwitchOrder { ordered, unordered };

// Goes on where `to` (a Boost.Context fiber) waits, as ThreadSanitizer's fiber `sanitizer`, and
// returns when someone jumps back, `to` then naming where that one waits. Every switch between a
// launch's fibers is one of these, and hides from ThreadSanitizer the handles' accesses around
// the jump itself: it must be told of a switch before it (its stack record follows the code),
// and Boost reads and clears `to` in between, which it would count to the fiber jumped to, while
// the assignment after the jump back is the jumping one's. The ignored span begins in the name of
// the fiber jumped to and ends where that fiber's own jump returns.
void jump(context::fiber& to, [[maybe_unused]] void* sanitizer,
          [[maybe_unused]] SwitchOrder order) {
#if defined(CUDA_ON_CPU_TSAN)
  __tsan_switch_to_fiber(sanitizer, order == SwitchOrder::ordered ? 0 : 1 /* no sync */);
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
#endif
  to = std::move(to).resume();
#if defined(CUDA_ON_CPU_TSAN)
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
#endif
}

// What orders the threads of a block, told to ThreadSanitizer (nothing to do without it): all
// that the launching thread did before the block comes before it; each barrier orders all that
// the block's threads did before it before all they do after; the block comes before what the
// launching thread does next. A phase (the threads' runs between two barriers) begins by taking
// the order of the barrier before it and ends by adding to the next one's; the barriers take
// turns at two addresses, so that a phase never takes the order of its own threads.
class BlockOrder {
 public:
  // The launching thread's side.
  void block_begins() { release(&barrier_[0]); }
  void block_ended() {
    acquire(&barrier_[0]);
    acquire(&barrier_[1]);
  }
  // A thread's side: phase 0 begins the block, each barrier begins the next.
  void phase_begins(unsigned phase) { acquire(&barrier_[phase % 2]); }
  void phase_ends(unsigned phase) { release(&barrier_[(phase + 1) % 2]); }

 private:
#if defined(CUDA_ON_CPU_TSAN)
  static void acquire(char* address) { __tsan_acquire(address); }
  static void release(char* address) { __tsan_release(address); }
#else
  static void acquire(char*) {}
  static void release(char*) {}
#endif
  char barrier_[2] = {};  // their addresses only
};

// One thread position of every block that the launches on one OS thread run: a fiber that runs
// the kernel's thread body once per block and waits for the next block between them, made once
// (with its stack) and kept, so that ThreadSanitizer's record of its stack stays balanced. Made,
// run and destroyed on that OS thread only.
class Fiber {
 public:
  Fiber(const std::function<void()>* const* body, BlockOrder* order, void* scheduler_sanitizer)
      : stack_(new std::byte[stack_bytes]),
        order_(order),
        scheduler_sanitizer_(scheduler_sanitizer) {
#if defined(CUDA_ON_CPU_TSAN)
    sanitizer_ = __tsan_create_fiber(0);
#endif
    thread_ = context::fiber(std::allocator_arg, KeptStack{stack_.get()},
                             [this, body](context::fiber&& scheduler) {
                               scheduler_ = std::move(scheduler);
                               after_first_jump();
                               park(SwitchOrder::ordered);  // made: waits for a first block
                               while (!stopping_) {
                                 phase_ = 0;
                                 order_->phase_begins(phase_);
                                 (**body)();
                                 ended_.store(true, std::memory_order_relaxed);
                                 order_->phase_ends(phase_);
                                 park(SwitchOrder::unordered);
                               }
                               before_last_jump();
                               return std::move(scheduler_);
                             });
    jump(thread_, sanitizer_, SwitchOrder::ordered);
  }
  ~Fiber() {
    stopping_ = true;  // it waits for a next block: let the loop end
    jump(thread_, sanitizer_, SwitchOrder::ordered);
#if defined(CUDA_ON_CPU_TSAN)
    __tsan_destroy_fiber(sanitizer_);
#endif
  }
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // The scheduler's side.
  void start_block() { ended_.store(false, std::memory_order_relaxed); }
  // Runs the thread until its next barrier or the end of its body.
  void run_phase() { jump(thread_, sanitizer_, SwitchOrder::unordered); }
  bool ended() const { return ended_.load(std::memory_order_relaxed); }

  // The thread's side, at a barrier: goes back to the scheduler until the block's other threads
  // have reached it.
  void barrier() {
    order_->phase_ends(phase_);
    park(SwitchOrder::unordered);
    ++phase_;
    order_->phase_begins(phase_);
  }

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

  // The thread's side: goes back to the scheduler until it resumes this thread.
  void park(SwitchOrder order) { jump(scheduler_, scheduler_sanitizer_, order); }
  // The thread's function begins with the constructor's jump: what jump() does after its jump.
  static void after_first_jump() {
#if defined(CUDA_ON_CPU_TSAN)
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
#endif
  }
  // Boost jumps back to the scheduler when the thread's function returns: what jump() does
  // before its jump.
  void before_last_jump() {
#if defined(CUDA_ON_CPU_TSAN)
    __tsan_switch_to_fiber(scheduler_sanitizer_, 0);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
#endif
  }

  std::unique_ptr<std::byte[]> stack_;
  BlockOrder* order_;
  context::fiber thread_;     // where the thread goes on, while it waits; the scheduler's
  context::fiber scheduler_;  // where run_grid goes on, while the thread runs; the thread's
  void* sanitizer_ = nullptr;
  void* scheduler_sanitizer_;
  // Its body has run in this block: set by the thread, read by the scheduler between phases,
  // which ThreadSanitizer does not order (a single OS thread runs both: relaxed suffices).
  std::atomic<bool> ended_ = false;
  bool stopping_ = false;  // the scheduler's, read by the thread after an ordered switch
  unsigned phase_ = 0;     // the thread's
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
  BlockOrder order;
  std::vector<std::unique_ptr<Fiber>> fibers;  // as many as the largest block so far
  std::vector<std::max_align_t> shared;        // dynamic shared memory
  unsigned running = 0;                        // the fiber that runs, while one does
};

thread_local BlockRunner runner;

// Sets which thread of the block runs next (threadIdx for its kernel, runner.running for its
// barrier). Hidden from ThreadSanitizer: the scheduler alone writes them, each time before the
// thread that reads them runs, but no barrier orders that, so it would report every read.
void set_running(unsigned t) {
#if defined(CUDA_ON_CPU_TSAN)
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
#endif
  runner.running = t;
  threadIdx = {t, 0, 0};
#if defined(CUDA_ON_CPU_TSAN)
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
#endif
}

}  // namespace

void run_grid(unsigned blocks, unsigned threads, std::size_t shared_bytes,
              const std::function<void()>& thread_body) {
  if (threads == 0 || threads > 1024) fail("a block has 1 to 1024 threads");
  if (runner.body) fail("a kernel launched another");
  while (runner.fibers.size() < threads)
    runner.fibers.push_back(
        std::make_unique<Fiber>(&runner.body, &runner.order, runner.scheduler_sanitizer));
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
    runner.order.block_begins();
    // Phase by phase: each thread runs to its next barrier or its end, in thread order.
    for (bool waiting = true; waiting;) {
      waiting = false;
      for (unsigned t = 0; t < threads; ++t) {
        Fiber& fiber = *runner.fibers[t];
        if (fiber.ended()) continue;
        set_running(t);
        fiber.run_phase();
        waiting = waiting || !fiber.ended();
      }
    }
    runner.order.block_ended();
  }
  runner.body = nullptr;
}

void* dynamic_shared_memory() { return runner.shared.data(); }

void sync_threads() {
  if (!runner.body) fail("__syncthreads outside a kernel");
  runner.fibers[runner.running]->barrier();
}

}  // namespace cuda_on_cpu
