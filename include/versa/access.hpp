#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "versa/access_mode.hpp"
#include "versa/handle.hpp"
#include "versa/placement.hpp"

namespace versa {

// An access of a task to a handle, created by read(), write(), write_only(), commute() and add().
// `View` is the argument type the task body receives for it (NoView for tokens).
template <class View>
struct Access {
  detail::HandleState* handle;
  AccessMode mode;
};

namespace detail {
template <class H, bool Const>
struct ViewOf;
template <class T, bool Const>
struct ViewOf<Handle<T>, Const> {
  using type = Span<std::conditional_t<Const, const T, T>>;
};
template <class T, bool Const>
struct ViewOf<TileHandle<T>, Const> {
  using type = Tile<std::conditional_t<Const, const T, T>>;
};
template <bool Const>
struct ViewOf<Token, Const> {
  using type = NoView;
};
template <class H, bool Const>
using view_of_t = typename ViewOf<std::remove_cvref_t<H>, Const>::type;
}  // namespace detail

// Read the handle's data; the body receives a read-only view.
template <class H>
Access<detail::view_of_t<H, true>> read(const H& handle) {
  return {detail::state_of(handle), AccessMode::read};
}

// Read and modify the handle's data; the body receives a writable view.
template <class H>
Access<detail::view_of_t<H, false>> write(const H& handle) {
  return {detail::state_of(handle), AccessMode::write};
}

// Overwrite the handle's data entirely without reading it; the body receives a writable view
// whose old contents are unspecified.
template <class H>
Access<detail::view_of_t<H, false>> write_only(const H& handle) {
  return {detail::state_of(handle), AccessMode::write_only};
}

// Modify the handle's data with an operation that commutes with the other commute accesses of
// the same run: they run one at a time, in any order.
template <class H>
Access<detail::view_of_t<H, false>> commute(const H& handle) {
  return {detail::state_of(handle), AccessMode::commute};
}

// Add a contribution to the handle's data (a reduction); adds of one run may run in any order.
template <class H>
Access<detail::view_of_t<H, false>> add(const H& handle) {
  return {detail::state_of(handle), AccessMode::add};
}

// An access in a user-defined mode (versa/access_mode.hpp); the body receives a writable view
// when the mode writes, a read-only one otherwise.
//   constexpr versa::AccessType multiply{.reorderable = true, .group = 1};
//   rt.submit("scale", [](versa::Span<double> v) { v[0] *= 3; }, versa::access<multiply>(h));
template <AccessType type, class H>
Access<detail::view_of_t<H, !type.writes>> access(const H& handle) {
  static_assert(type.group >= 0 && type.group <= 7, "versa::AccessType: group must be 0-7");
  return {detail::state_of(handle), type.mode()};
}

// Task option: a higher priority runs earlier among the ready tasks of a queue, and a device
// takes the tasks waiting for automatic placement by priority. Default 0. On a GPU, a task of
// positive priority also runs on a stream of the GPU's highest priority
// (Config::cuda_priority_streams).
struct Priority {
  int value;
};
inline Priority priority(int value) { return {value}; }

// Task option: the task's name in traces and error messages, instead of its task type's name.
struct TaskName {
  std::string value;
};
inline TaskName name(std::string value) { return {std::move(value)}; }

// Task option for one-off tasks (submit with a name and a body): where the task may run. By
// default a one-off task runs on a CPU worker; with placement(Placement::automatic) it may also
// run on an emulated accelerator, through the same body. Task types set their rule with
// TaskType::placement instead.
struct TaskPlacement {
  Placement value;
};
inline TaskPlacement placement(Placement rule) { return {rule}; }

// Task argument, for task types: a value that the task's implementations receive as a const
// reference, at its place among the views (StarPU's STARPU_VALUE). It is copied, or moved, into
// the task at submit, so that tasks of one type may differ in it: a level, a scale factor, the
// sizes a CUDA implementation needs on the host to launch its kernels. It orders nothing (only
// accesses do). A one-off body (submit with a name) captures its values instead.
//   auto scale = versa::task_type("scale").cpu([](double f, versa::Span<double> v) { ... });
//   rt.submit(scale, versa::value(2.0), versa::write(h));
template <class T>
struct Value {
  using type = T;
  T value;
};
template <class T>
Value<std::decay_t<T>> value(T&& v) {
  return {std::forward<T>(v)};
}

namespace detail {
template <class T>
struct IsAccess : std::false_type {};
template <class V>
struct IsAccess<Access<V>> : std::true_type {
  using view = V;
};
template <class T>
constexpr bool is_access_v = IsAccess<std::remove_cvref_t<T>>::value;
template <class T>
struct IsValue : std::false_type {};
template <class T>
struct IsValue<Value<T>> : std::true_type {};
template <class T>
constexpr bool is_value_v = IsValue<std::remove_cvref_t<T>>::value;
}  // namespace detail

}  // namespace versa
