#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "versa/cuda_fwd.hpp"
#include "versa/detail/cuda_backend.hpp"
#include "versa/placement.hpp"
#include "versa/reduction.hpp"
#include "versa/work.hpp"

namespace versa {

namespace detail {
struct NoImplementation {};

// What a task type is besides its bodies; each builder call copies it into the new type.
struct TaskTypeSettings {
  std::string name;
  Placement placement = Placement::automatic;
  // Combines the `add` accesses of this type's tasks to handles that have no operator of their
  // own (the handle keeps it from then on); null when none.
  std::shared_ptr<const ReductionOps> reduction;
  // A CUDA body was given to a build without the CUDA backend and dropped (TaskType::cuda); said
  // when the type is refused for having no implementation for any present device.
  bool cuda_left_out = false;
  // The work size of a task from the shapes of its data (TaskType::work); empty when none.
  std::function<double(const Shapes&)> work;
};

// Immutable once built, so that any number of threads may submit a type while others build new
// types from it: only registered_with changes, and it is atomic.
struct TaskTypeBase {
  explicit TaskTypeBase(TaskTypeSettings type_settings) : settings(std::move(type_settings)) {}
  const TaskTypeSettings settings;
  // Id of the last runtime that took a reference to this type (see Runtime::keep_alive);
  // lets repeated submissions skip the registry. Mutable: registering does not change the type.
  mutable std::atomic<std::uint64_t> registered_with{0};
};

template <class Cpu, class Cuda, class Emulated>
struct TaskTypeState : TaskTypeBase {
  template <class CpuArg, class CudaArg, class EmulatedArg>
  TaskTypeState(TaskTypeSettings type_settings, CpuArg&& cpu_body, CudaArg&& cuda_body,
                EmulatedArg&& emulated_body)
      : TaskTypeBase(std::move(type_settings)),
        cpu(std::forward<CpuArg>(cpu_body)),
        cuda(std::forward<CudaArg>(cuda_body)),
        emulated(std::forward<EmulatedArg>(emulated_body)) {}
  const Cpu cpu;
  const Cuda cuda;
  const Emulated emulated;
};

template <class F>
constexpr bool is_implementation_v = !std::is_same_v<F, NoImplementation>;
}  // namespace detail

// A kind of task (StarPU's codelet): a name, one implementation per device kind and a placement
// rule. Each implementation is a callable taking one typed view per data access of the task, in
// the order of the accesses given to submit (tokens pass nothing): Span<const T> / Tile<const T>
// for read, Span<T> / Tile<T> for the other modes. A mismatch is a compile error at submit.
//   .cpu(f)       runs on CPU workers, on host memory.
//   .cuda(f)      runs on a GPU worker: f(versa::CudaContext&, views...) launches its work on
//                 context.stream() (see versa/cuda.hpp); the views point to device memory.
//                 Dropped in a build without the CUDA backend, so it needs no #if (see cuda()).
//   .emulated(f)  runs on the emulated accelerator; without it the CPU implementation runs
//                 there. A different body lets benchmarks model a device's speed.
// A task type is an immutable value; builder methods return a new one and leave the type they
// are called on as it was. Types are cheap to copy (copies share their state) and may be used
// from any thread, also while other threads build new types from them. Build types once and
// reuse them: a runtime keeps every type it has run until it is destroyed.
//
//   auto axpy = versa::task_type("axpy")
//       .cpu([](versa::Span<const double> x, versa::Span<double> y) {
//         for (size_t i = 0; i < y.size(); ++i) y[i] += 2.0 * x[i]; })
//       .placement(versa::Placement::automatic);
//   rt.submit(axpy, versa::read(x), versa::write(y));
template <class Cpu = detail::NoImplementation, class Cuda = detail::NoImplementation,
          class Emulated = detail::NoImplementation>
class TaskType {
 public:
  using State = detail::TaskTypeState<Cpu, Cuda, Emulated>;

  explicit TaskType(std::string name) requires(!detail::is_implementation_v<Cpu> &&
                                               !detail::is_implementation_v<Cuda> &&
                                               !detail::is_implementation_v<Emulated>)
      : state_(std::make_shared<const State>(
            detail::TaskTypeSettings{std::move(name), Placement::automatic, nullptr, false, {}},
            Cpu{}, Cuda{}, Emulated{})) {}

  // Returns this task type with `body` as its CPU implementation.
  template <class F>
  [[nodiscard]] TaskType<std::decay_t<F>, Cuda, Emulated> cpu(F&& body) const {
    return rebuild<std::decay_t<F>, Cuda, Emulated>(state_->settings, std::forward<F>(body),
                                                    state_->cuda, state_->emulated);
  }

  // Returns this task type with `body` as its CUDA implementation, called as
  // body(versa::CudaContext&, views...).
  //
  // In a build of Versa without the CUDA backend (VERSA_HAVE_CUDA is 0: no nvcc, or
  // VERSA_CUDA=OFF), where no GPU can ever run it, `body` is dropped: the result has this type's
  // C++ type and implementations, as if .cuda had not been called. `body` is never stored, called
  // or converted to a function pointer, so its call operator is never emitted and the functions
  // it calls need only be declared. Code with CUDA bodies then builds everywhere without #if:
  // the body passes its context and device pointers to kernel wrappers that a header declares
  // with versa::CudaContext& (versa/cuda_fwd.hpp, no CUDA header) and .cu files define, compiled
  // only where CUDA is. The body must still compile: without versa/cuda.hpp it can pass the
  // context on but not call context.stream().
  template <class F>
  [[nodiscard]] TaskType<Cpu, std::conditional_t<detail::cuda_backend, std::decay_t<F>, Cuda>,
                         Emulated>
  cuda(F&& body) const {
    if constexpr (detail::cuda_backend) {
      return rebuild<Cpu, std::decay_t<F>, Emulated>(state_->settings, state_->cpu,
                                                     std::forward<F>(body), state_->emulated);
    } else {
      (void)body;
      detail::TaskTypeSettings settings = state_->settings;
      settings.cuda_left_out = true;
      return rebuild<Cpu, Cuda, Emulated>(std::move(settings), state_->cpu, state_->cuda,
                                          state_->emulated);
    }
  }

  // Returns this task type with `body` as its implementation on the emulated accelerator.
  template <class F>
  [[nodiscard]] TaskType<Cpu, Cuda, std::decay_t<F>> emulated(F&& body) const {
    return rebuild<Cpu, Cuda, std::decay_t<F>>(state_->settings, state_->cpu, state_->cuda,
                                               std::forward<F>(body));
  }

  // Returns this task type with `rule` as where its tasks may run (default
  // Placement::automatic).
  [[nodiscard]] TaskType placement(Placement rule) const {
    detail::TaskTypeSettings settings = state_->settings;
    settings.placement = rule;
    return rebuild<Cpu, Cuda, Emulated>(std::move(settings), state_->cpu, state_->cuda,
                                        state_->emulated);
  }

  // Returns this task type with `op` as the reduction operator of its `add` accesses, for
  // handles that have none yet (Handle::set_reduction).
  template <class T>
  [[nodiscard]] TaskType reduction(const Reduction<T>& op) const {
    detail::TaskTypeSettings settings = state_->settings;
    settings.reduction = op.ops();
    return rebuild<Cpu, Cuda, Emulated>(std::move(settings), state_->cpu, state_->cuda,
                                        state_->emulated);
  }

  // Returns this task type with `size` as its work hint: size(shapes) gives the work of a task
  // from the shapes of its data, in any unit proportional to its run time (flops for a BLAS
  // kernel). The performance model keys on it instead of the bytes of the task's data, so that
  // tasks of equal bytes and different work (a triangular and a full tile update) are told
  // apart. Called at submit when the runtime has accelerators; a per-task versa::work(x)
  // overrides it.
  template <class F>
  [[nodiscard]] TaskType work(F&& size) const {
    detail::TaskTypeSettings settings = state_->settings;
    settings.work = std::forward<F>(size);
    return rebuild<Cpu, Cuda, Emulated>(std::move(settings), state_->cpu, state_->cuda,
                                        state_->emulated);
  }

  const std::string& name() const { return state_->settings.name; }
  const std::shared_ptr<const State>& state() const { return state_; }

 private:
  template <class, class, class>
  friend class TaskType;
  explicit TaskType(std::shared_ptr<const State> state) : state_(std::move(state)) {}

  // A new state: the bodies cannot be moved out of this one, which other copies may share.
  template <class C, class G, class E, class CpuArg, class CudaArg, class EmulatedArg>
  static TaskType<C, G, E> rebuild(detail::TaskTypeSettings settings, CpuArg&& cpu_body,
                                   CudaArg&& cuda_body, EmulatedArg&& emulated_body) {
    return TaskType<C, G, E>(std::make_shared<const detail::TaskTypeState<C, G, E>>(
        std::move(settings), std::forward<CpuArg>(cpu_body), std::forward<CudaArg>(cuda_body),
        std::forward<EmulatedArg>(emulated_body)));
  }

  std::shared_ptr<const State> state_;
};

// Starts the definition of a task type named `name`; add implementations with .cpu(...),
// .cuda(...) and .emulated(...).
inline TaskType<> task_type(std::string name) { return TaskType<>(std::move(name)); }

}  // namespace versa
