#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "versa/detail/task_glue.hpp"
#include "versa/reduction.hpp"

namespace versa {

class Runtime;

namespace detail {
// Destroys a handle's state; if accesses are still pending it reports the misuse (rethrown by
// Runtime::wait_all) and waits for them, so nothing crashes and no data is lost. A scratch
// handle or a token is instead kept by the runtime until its accesses have finished.
void release_handle(HandleState* state);
struct HandleDeleter {
  void operator()(HandleState* state) const { release_handle(state); }
};
using HandleOwner = std::unique_ptr<HandleState, HandleDeleter>;
const std::string& handle_name(const HandleState* state);
void set_handle_write_back(HandleState* state, bool write_back);
void declare_handle_zero(HandleState* state);
void set_handle_reduction(HandleState* state, std::shared_ptr<const ReductionOps> ops);
}  // namespace detail

class HandleBase;
namespace detail {
// The runtime's state behind a handle (null when empty), for the access builders.
HandleState* state_of(const HandleBase& handle);
}  // namespace detail

// Untyped part of every handle: ownership of the dependency and data state.
class HandleBase {
 public:
  HandleBase() = default;
  HandleBase(HandleBase&&) noexcept = default;
  HandleBase& operator=(HandleBase&&) noexcept = default;

  // False for a default-constructed or moved-from handle; accessing such a handle is an error.
  explicit operator bool() const { return state_ != nullptr; }

  // The name given at registration ("" when none), used in traces and error messages.
  const std::string& name() const;

  // Whether wait_all() and the handle's destruction copy the data home from the devices into
  // the user's memory: true, the default. False for data whose final contents nobody reads in
  // host memory (an intermediate result that tasks on devices make and use): wait_all() leaves
  // it on the devices, and destroying the handle drops it there, which saves the copies and
  // leaves the user's memory as it was. Data already in host memory (where a write_only on the
  // CPU was renamed) comes home all the same, a copy within host memory. acquire() still brings
  // the data home, and a device that evicts the only copy still writes it home, as tasks may
  // need it again. Like StarPU's starpu_data_unregister_no_coherency. Throws
  // std::invalid_argument on an empty handle.
  void set_write_back(bool write_back) { detail::set_handle_write_back(state(), write_back); }

  // Declares that the data holds zeros now (a zero-initialised array), before any task uses
  // it: until something changes it in host memory, a device that needs a copy fills its own
  // buffer with zeros (cudaMemsetAsync) instead of copying the array over the host link. For
  // accumulators that tasks on devices fill (commute or write after the zeros). Declaring data
  // that is not zero makes the devices' copies wrong (builds with asserts check it). Throws
  // std::invalid_argument on an empty handle and std::logic_error once a task has used it.
  void declare_zero() { detail::declare_handle_zero(state()); }

 protected:
  explicit HandleBase(detail::HandleState* state) : state_(state) {}
  detail::HandleState* state() const { return state_.get(); }

 private:
  friend detail::HandleState* detail::state_of(const HandleBase& handle);
  detail::HandleOwner state_;
};

inline detail::HandleState* detail::state_of(const HandleBase& handle) {
  return handle.state_.get();
}

// A handle on a contiguous host array of T, registered with Runtime::data(). Tasks see it as a
// Span<T> (Span<const T> when reading). Movable, not copyable; destroying it waits for the tasks
// that still use it (and reports that as a misuse); destroyed while a view from acquire() on it is
// alive, it reports the misuse and is destroyed at the first wait_all after the view's release.
// The array must outlive the handle. A handle of Runtime::scratch() owns its memory instead, and
// destroying it never waits.
template <class T>
class Handle : public HandleBase {
 public:
  using element_type = T;
  Handle() = default;

  // Sets how `add` accesses to this handle combine (see versa::Reduction); call it before
  // submitting them. Throws std::logic_error while a run of adds with another operator is open.
  void set_reduction(const Reduction<T>& reduction) {
    detail::set_handle_reduction(state(), reduction.ops());
  }

 private:
  friend class Runtime;
  using HandleBase::HandleBase;
};

// A handle on a column-major 2-D block of T with a leading dimension, registered with
// Runtime::tile(). Tasks see it as a Tile<T> (Tile<const T> when reading).
template <class T>
class TileHandle : public HandleBase {
 public:
  using element_type = T;
  TileHandle() = default;

  // Sets how `add` accesses to this handle combine (see versa::Reduction); call it before
  // submitting them. Throws std::logic_error while a run of adds with another operator is open.
  void set_reduction(const Reduction<T>& reduction) {
    detail::set_handle_reduction(state(), reduction.ops());
  }

 private:
  friend class Runtime;
  using HandleBase::HandleBase;
};

// A handle with no data: a pure ordering constraint between the tasks that access it. Accesses
// to a token pass no argument to the task body. Destroying a token does not wait for its tasks.
class Token : public HandleBase {
 public:
  Token() = default;

 private:
  friend class Runtime;
  using HandleBase::HandleBase;
};

inline const std::string& HandleBase::name() const {
  static const std::string empty;
  return state_ ? detail::handle_name(state_.get()) : empty;
}

}  // namespace versa
