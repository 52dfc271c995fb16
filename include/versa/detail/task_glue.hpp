// The small part of the task machinery that the public templates need to see: how an access is
// recorded and how a task body is invoked with typed views. Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "versa/access_mode.hpp"
#include "versa/cuda_fwd.hpp"
#include "versa/placement.hpp"
#include "versa/view.hpp"

namespace versa {
class Shapes;  // versa/work.hpp
}

namespace versa::detail {

class HandleState;  // src/data/handle_state.hpp
struct TaskTypeBase;
struct ReductionOps;  // versa/reduction.hpp

// Shape of the data behind a handle, in elements.
struct Layout {
  std::size_t rows = 0;  // a 1-D array of n elements is n x 1 with ld = n
  std::size_t cols = 0;
  std::size_t ld = 0;
  std::size_t element_size = 0;  // bytes
  // The elements' type, for checking a reduction operator against it; null for a token.
  const std::type_info* element_type = nullptr;

  // Bytes of the data itself (without the gaps of a leading dimension larger than rows).
  std::size_t bytes() const { return rows * cols * element_size; }
  // Elements the data spans in memory, gaps of the leading dimension included.
  std::size_t span() const { return cols == 0 ? 0 : ld * (cols - 1) + rows; }
  // Whether the bytes of span() overflow std::size_t (ld >= rows): no memory holds such data.
  bool overflows() const {
    constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
    if (rows == 0 || cols == 0 || element_size == 0) return false;
    if (cols - 1 > (most - rows) / ld) return true;
    return span() > most / element_size;
  }
};

// One access of a task, as registered on its handle. `data` is filled in by the runtime just
// before the body runs (it is the replica on the node where the task executes).
struct AccessRecord {
  HandleState* handle = nullptr;
  void* data = nullptr;
  const Layout* layout = nullptr;
  AccessMode mode = AccessMode::read;
};

// Calls a task body: `closure` points at the stored callable.
using InvokeFn = void (*)(void* closure, const AccessRecord* accesses);
using InvokeCudaFn = void (*)(void* closure, const AccessRecord* accesses, CudaContext& context);
using MoveFn = void (*)(void* destination, void* source);
using DestroyFn = void (*)(void* closure);

// Bytes of a closure stored in the task record itself (larger ones go to the heap).
inline constexpr std::size_t inline_closure_bytes = 32;

class Task;

// A spawned child whose record the runtime has made (Runtime::start_child) and whose closure the
// caller constructs at `closure` before submitting it.
struct StartedChild {
  Task* task = nullptr;  // null: the runtime takes this child the general way
  void* closure = nullptr;
};

// The implementations of a task beside the CPU one, and where it may run.
struct Implementations {
  InvokeCudaFn cuda = nullptr;
  InvokeFn emulated = nullptr;
  Placement placement = Placement::automatic;
  const ReductionOps* reduction = nullptr;
  bool cuda_left_out = false;  // TaskTypeSettings::cuda_left_out
  const std::function<double(const Shapes&)>* work_hint = nullptr;  // TaskTypeSettings::work
};

// Everything the runtime needs to create one task; built by the templates in runtime.hpp, which
// set every field. No default values: a fine-grained task's submission would pay for clearing
// the whole record (a memset) before writing each field again.
struct TaskDesc {
  const char* name;       // stable for the runtime's lifetime (interned)
  const char* type_name;  // the task type's name (stable likewise)
  int priority;
  const AccessRecord* accesses;  // handle and mode set; the rest filled by the runtime
  std::size_t access_count;
  InvokeFn invoke;           // CPU implementation; null when the type has none
  InvokeCudaFn invoke_cuda;  // CUDA implementation; null when none
  bool cuda_left_out;        // a CUDA body dropped by a build without CUDA
  InvokeFn invoke_emulated;  // emulated-device implementation (defaults to the CPU one)
  Placement placement;
  const ReductionOps* reduction;  // the task type's operator for `add` accesses
  void* closure;                  // moved from with `move` into the task's storage
  std::size_t closure_size;
  std::size_t closure_align;
  MoveFn move;
  DestroyFn destroy;
  bool is_child;  // spawn(): counted by the enclosing task's sync()
  double work;    // versa::work(x) given at submit; negative when not
  // The task type's work hint (TaskType::work); null when none. Outlives the submit call.
  const std::function<double(const Shapes&)>* work_hint;
  // A CPU body that runs even when a copy its data needed failed (the failure is recorded all
  // the same, as any failed copy's), with every access's data null: versa::mpi's sends, whose
  // receiver must hear of it. False for every user's task.
  bool runs_after_failed_copy;
};

// View types produced by an access. `NoView` marks accesses to data-less handles (tokens),
// which add an ordering constraint but pass no argument to the task body.
struct NoView {};

template <class V>
V make_view(const AccessRecord& access) {
  using T = typename V::element_type;
  if constexpr (std::is_same_v<V, Span<T>>) {
    return V(static_cast<T*>(access.data), access.layout->rows);
  } else {
    static_assert(std::is_same_v<V, Tile<T>>, "views are Span<T> or Tile<T>");
    return V(static_cast<T*>(access.data), access.layout->rows, access.layout->cols,
             access.layout->ld);
  }
}

// The arguments of a body: one view per data access, in order; tokens contribute nothing.
template <class V>
auto view_argument(const AccessRecord& access) {
  if constexpr (std::is_same_v<V, NoView>) {
    (void)access;
    return std::tuple<>();
  } else {
    return std::tuple<V>(make_view<V>(access));
  }
}

template <class... Views, std::size_t... I>
auto view_arguments(const AccessRecord* accesses, std::index_sequence<I...>) {
  return std::tuple_cat(view_argument<Views>(accesses[I])...);
}

// Calls `body` with the views of `accesses`; the tuple argument only carries the view types.
template <class F, class... Views>
void invoke_with_views(F& body, std::tuple<Views...>, const AccessRecord* accesses) {
  std::apply(body, view_arguments<Views...>(accesses, std::index_sequence_for<Views...>()));
}

template <class F, class Tuple>
struct IsApplicable;
template <class F, class... Args>
struct IsApplicable<F, std::tuple<Args...>> : std::is_invocable<F, Args...> {};
template <class F, class Tuple>
constexpr bool is_applicable_v = IsApplicable<F, Tuple>::value;

}  // namespace versa::detail
