#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "versa/placement.hpp"
#include "versa/reduction.hpp"

namespace versa {

namespace detail {
struct NoImplementation {};

struct TaskTypeBase {
  explicit TaskTypeBase(std::string type_name) : name(std::move(type_name)) {}
  std::string name;
  Placement placement = Placement::automatic;
  // Combines the `add` accesses of this type's tasks to handles that have no operator of their
  // own (the handle keeps it from then on); null when none.
  std::shared_ptr<const ReductionOps> reduction;
  // Id of the last runtime that took a reference to this type (see Runtime::keep_alive);
  // lets repeated submissions skip the registry.
  std::atomic<std::uint64_t> registered_with{0};
};

template <class Cpu, class Cuda, class Emulated>
struct TaskTypeState : TaskTypeBase {
  TaskTypeState(std::string type_name, Cpu cpu_body, Cuda cuda_body, Emulated emulated_body)
      : TaskTypeBase(std::move(type_name)),
        cpu(std::move(cpu_body)),
        cuda(std::move(cuda_body)),
        emulated(std::move(emulated_body)) {}
  Cpu cpu;
  Cuda cuda;
  Emulated emulated;
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
//   .emulated(f)  runs on the emulated accelerator; without it the CPU implementation runs
//                 there. A different body lets benchmarks model a device's speed.
// Task types are cheap to copy (they share their state) and may be used from any thread.
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
      : state_(std::make_shared<State>(std::move(name), Cpu{}, Cuda{}, Emulated{})) {}

  // Returns this task type with `body` as its CPU implementation.
  template <class F>
  TaskType<std::decay_t<F>, Cuda, Emulated> cpu(F&& body) const {
    return rebuild<std::decay_t<F>, Cuda, Emulated>(std::forward<F>(body), state_->cuda,
                                                    state_->emulated);
  }

  // Returns this task type with `body` as its CUDA implementation.
  template <class F>
  TaskType<Cpu, std::decay_t<F>, Emulated> cuda(F&& body) const {
    return rebuild<Cpu, std::decay_t<F>, Emulated>(state_->cpu, std::forward<F>(body),
                                                   state_->emulated);
  }

  // Returns this task type with `body` as its implementation on the emulated accelerator.
  template <class F>
  TaskType<Cpu, Cuda, std::decay_t<F>> emulated(F&& body) const {
    return rebuild<Cpu, Cuda, std::decay_t<F>>(state_->cpu, state_->cuda, std::forward<F>(body));
  }

  // Sets where the tasks of this type may run (default Placement::automatic). Affects the
  // tasks submitted afterwards.
  TaskType placement(Placement rule) const {
    state_->placement = rule;
    return *this;
  }

  // Sets the reduction operator of this type's `add` accesses, for handles that have none yet
  // (Handle::set_reduction). Affects the tasks submitted afterwards.
  template <class T>
  TaskType reduction(const Reduction<T>& op) const {
    state_->reduction = op.ops();
    return *this;
  }

  const std::string& name() const { return state_->name; }
  const std::shared_ptr<State>& state() const { return state_; }

 private:
  template <class, class, class>
  friend class TaskType;
  explicit TaskType(std::shared_ptr<State> state) : state_(std::move(state)) {}

  template <class C, class G, class E, class CpuArg, class CudaArg, class EmulatedArg>
  TaskType<C, G, E> rebuild(CpuArg&& cpu_body, CudaArg&& cuda_body,
                            EmulatedArg&& emulated_body) const {
    auto state = std::make_shared<detail::TaskTypeState<C, G, E>>(
        state_->name, std::forward<CpuArg>(cpu_body), std::forward<CudaArg>(cuda_body),
        std::forward<EmulatedArg>(emulated_body));
    state->placement = state_->placement;
    state->reduction = state_->reduction;
    return TaskType<C, G, E>(std::move(state));
  }

  std::shared_ptr<State> state_;
};

// Starts the definition of a task type named `name`; add implementations with .cpu(...),
// .cuda(...) and .emulated(...).
inline TaskType<> task_type(std::string name) { return TaskType<>(std::move(name)); }

}  // namespace versa
