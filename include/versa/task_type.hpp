#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace versa {

// Where the tasks of a task type may run. Only CPU workers exist so far, so every rule resolves
// to the CPU implementation; the rule is recorded for the heterogeneous scheduler.
enum class Placement { automatic, cpu_only, gpu_only, prefer_gpu };

namespace detail {
struct NoImplementation {};

struct TaskTypeBase {
  explicit TaskTypeBase(std::string type_name) : name(std::move(type_name)) {}
  std::string name;
  Placement placement = Placement::automatic;
  // Id of the last runtime that took a reference to this type (see Runtime::keep_alive);
  // lets repeated submissions skip the registry.
  std::atomic<std::uint64_t> registered_with{0};
};

template <class Cpu>
struct TaskTypeState : TaskTypeBase {
  TaskTypeState(std::string type_name, Cpu cpu_body)
      : TaskTypeBase(std::move(type_name)), cpu(std::move(cpu_body)) {}
  Cpu cpu;
};
}  // namespace detail

// A kind of task (StarPU's codelet): a name and one implementation per device kind. The CPU
// implementation is a callable taking one typed view per data access of the task, in the order
// of the accesses given to submit (tokens pass nothing): Span<const T> / Tile<const T> for read,
// Span<T> / Tile<T> for the other modes. A mismatch is a compile error at submit.
// Task types are cheap to copy (they share their state) and may be used from any thread.
//
//   auto axpy = versa::task_type("axpy").cpu([](versa::Span<const double> x, versa::Span<double> y)
//   {
//     for (size_t i = 0; i < y.size(); ++i) y[i] += 2.0 * x[i]; });
//   rt.submit(axpy, versa::read(x), versa::write(y));
template <class Cpu = detail::NoImplementation>
class TaskType {
 public:
  explicit TaskType(std::string name) requires std::is_same_v<Cpu, detail::NoImplementation>
      : state_(std::make_shared<detail::TaskTypeState<Cpu>>(std::move(name), Cpu{})) {}

  // Returns this task type with `body` as its CPU implementation.
  template <class F>
  TaskType<std::decay_t<F>> cpu(F&& body) const {
    return TaskType<std::decay_t<F>>(std::make_shared<detail::TaskTypeState<std::decay_t<F>>>(
                                         state_->name, std::forward<F>(body)),
                                     state_->placement);
  }

  // Sets where the tasks of this type may run (default Placement::automatic).
  TaskType placement(Placement rule) const {
    state_->placement = rule;
    return *this;
  }

  const std::string& name() const { return state_->name; }
  const std::shared_ptr<detail::TaskTypeState<Cpu>>& state() const { return state_; }

 private:
  template <class>
  friend class TaskType;
  TaskType(std::shared_ptr<detail::TaskTypeState<Cpu>> state, Placement rule)
      : state_(std::move(state)) {
    state_->placement = rule;
  }

  std::shared_ptr<detail::TaskTypeState<Cpu>> state_;
};

// Starts the definition of a task type named `name`; add implementations with .cpu(...).
inline TaskType<> task_type(std::string name) { return TaskType<>(std::move(name)); }

}  // namespace versa
