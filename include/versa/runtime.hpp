#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "versa/access.hpp"
#include "versa/config.hpp"
#include "versa/handle.hpp"
#include "versa/statistics.hpp"
#include "versa/task_type.hpp"
#include "versa/view.hpp"
#include "versa/work.hpp"

namespace versa {

template <class View>
class HostView;
class PinnedHostMemory;
namespace detail {
class HostPins;  // src/data/host_pins.hpp
void unpin(HostPins& pins, const void* data);
// Lets layers built on the runtime (src/mpi) submit tasks described by hand.
struct RuntimeAccess;
}  // namespace detail

// The task runtime: worker threads, handles and the tasks that access them.
//
// Tasks are submitted with the handles they access and how; Versa derives the dependencies from
// the order of submission on each handle (there is no task graph to build) and runs each task as
// soon as the data it needs is ready, on a worker where that data is likely hot.
//
//   versa::Runtime rt;                                   // one worker per core
//   std::vector<double> x(n), y(n);
//   auto hx = rt.data(x), hy = rt.data(y);
//   rt.submit("scale", [](versa::Span<double> v) { for (auto& e : v) e *= 2; }, versa::write(hx));
//   rt.submit("axpy", [](versa::Span<const double> a, versa::Span<double> b) { ... },
//             versa::read(hx), versa::write(hy));
//   rt.wait_all();                                       // rethrows the first task failure
//
// Thread-safety: every member may be called from any thread, including from inside tasks, except
// the constructor and destructor. The destructor waits for all tasks and brings the data home as
// wait_all() does; handles may outlive the runtime (destroying one later frees it, nothing more).
class Runtime {
 public:
  // Starts the workers. Throws std::invalid_argument when a Config value (or an environment
  // variable overriding it) is out of range.
  Runtime();
  explicit Runtime(Config config);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Number of CPU workers: the worker threads, and the waiting thread when it is one of them
  // (Config::caller_runs_tasks).
  int cpu_workers() const;

  // Number of accelerators in use (CUDA GPUs, then emulated devices).
  int device_count() const;
  // Number of CUDA GPUs among them.
  int gpu_count() const;

  // Tasks run and bytes moved per device: entry 0 is the CPU, then one per accelerator.
  // Thread-safe; the figures are a snapshot.
  std::vector<DeviceStatistics> statistics() const;

  // Per task type and device kind: tasks run, their kernel time (total and median) and the
  // bytes copied for their inputs, sorted by type, then kind. Empty unless
  // Config::task_statistics (or print_statistics, VERSA_STATS=1) is on. Thread-safe; a snapshot.
  //   for (const auto& t : rt.task_statistics())
  //     std::printf("%s on %s: %llu tasks, %.3f s\n", t.task_type.c_str(), t.device_kind.c_str(),
  //                 (unsigned long long)t.tasks, t.kernel_seconds);
  std::vector<TaskStatistics> task_statistics() const;

  // Describes what pending work waits for: each handle with tasks parked at it (or a host view
  // open), its version (accesses finished), the version each parked task needs, and who holds
  // it: the unfinished accesses allowed on it, each with what it is doing (running on a CPU
  // worker, ready, on a device, parked at another handle, a host view from acquire() not
  // released); then the chains of tasks waiting for tasks. Holders other than host views need
  // Config::track_tasks (also on with stall_report_seconds or dot_file). The stall report
  // (Config::stall_report_seconds) is this text. Thread-safe; not from Config::diagnostics.
  //   std::fprintf(stderr, "%s", rt.describe_pending().c_str());
  std::string describe_pending() const;

  // The one-line summary of the machine printed at start-up (unless Config::quiet).
  const std::string& topology_summary() const;

  // Bytes the runtime holds for task records (its task pool; it grows with the number of tasks
  // pending at once and is kept for reuse until the runtime is destroyed).
  std::size_t task_memory_bytes() const;

  // Bytes held for the partial buffers of reductions, in use or kept for reuse, on every memory
  // node (Config::reduction_memory_limit bounds those in use). wait_all() returns them all: 0
  // after it.
  std::size_t reduction_memory_bytes() const;
  // Bytes of host buffers that renamed write_only accesses hold (in use, or kept for reuse until
  // the next wait_all): 0 after wait_all. (On a device, a renamed buffer is a replica like any
  // other, in the device's memory, freed when its last access ends.)
  std::size_t rename_memory_bytes() const;
  // Accesses renamed so far: write_only accesses (and user-defined modes that write without
  // reading) that got a fresh buffer instead of waiting for the accesses before them.
  std::uint64_t renamed_accesses() const;

  // --- Data -------------------------------------------------------------------------------

  // Registers `count` elements at `data` (host memory that must outlive the handle). Throws
  // std::invalid_argument for null data, std::length_error when the size in bytes overflows
  // (a negative count made unsigned), naming the handle.
  template <class T>
  Handle<T> data(T* data, std::size_t count, std::string name = {}) {
    return Handle<T>(create_handle(data, detail::Layout{count, 1, count, sizeof(T), &typeid(T)},
                                   std::move(name)));
  }
  template <class T>
  Handle<T> data(std::vector<T>& values, std::string name = {}) {
    return data(values.data(), values.size(), std::move(name));
  }
  // Registers a single object.
  template <class T>
  Handle<T> data(T& value, std::string name = {}) {
    return data(&value, 1, std::move(name));
  }

  // Registers a column-major rows x cols block with leading dimension ld >= rows; throws as
  // data() does, and std::invalid_argument for ld < rows.
  template <class T>
  TileHandle<T> tile(T* data, std::size_t rows, std::size_t cols, std::size_t ld,
                     std::string name = {}) {
    return TileHandle<T>(create_handle(data, detail::Layout{rows, cols, ld, sizeof(T), &typeid(T)},
                                       std::move(name)));
  }

  // Registers `count` elements of T in memory the runtime allocates, all zero: scratch data that
  // tasks make and use (a workspace, an intermediate result), like StarPU's data registered on
  // no home node. Destroying the handle does not wait for its tasks: they run on, and the
  // runtime frees the memory once they have run (the thread that ends the last of them does;
  // data that was renamed or holds partial sums waits for the next wait_all), so a
  // handle per step in a loop costs no synchronisation. The data
  // is declared zero and not written back (HandleBase::declare_zero, set_write_back(false)): a
  // device makes its copy without the host link and keeps what tasks leave there; acquire() and
  // CPU tasks see it as any data. T must be trivially copyable, with all-zero bytes a zero value.
  //
  //   for (int step = 0; step < steps; ++step) {
  //     auto work = rt.scratch<double>(n, "work");
  //     rt.submit(make, versa::write_only(work));
  //     rt.submit(use, versa::read(work), versa::write(result));
  //   }  // no wait: each step's work is freed once its tasks have run
  template <class T>
  requires std::is_trivially_copyable_v<T> Handle<T> scratch(std::size_t count,
                                                             std::string name = {}) {
    return Handle<T>(
        create_scratch(detail::Layout{count, 1, count, sizeof(T), &typeid(T)}, std::move(name)));
  }
  // A rows x cols column-major tile (leading dimension rows) of scratch data; see scratch().
  template <class T>
  requires std::is_trivially_copyable_v<T> TileHandle<T> scratch_tile(std::size_t rows,
                                                                      std::size_t cols,
                                                                      std::string name = {}) {
    return TileHandle<T>(
        create_scratch(detail::Layout{rows, cols, rows, sizeof(T), &typeid(T)}, std::move(name)));
  }
  // Bytes of scratch data alive (scratch(), scratch_tile()), destroyed handles not yet freed
  // included: 0 after wait_all once every scratch handle is destroyed.
  std::size_t scratch_memory_bytes() const;

  // Creates a handle with no data, for ordering tasks. Destroying it does not wait for its tasks.
  Token token(std::string name = {});

  // Page-locks [data, data + bytes) for as long as the returned object lives, so that copies
  // between it and GPUs run asynchronously at full speed. Handles of Config::auto_pin_bytes or
  // more are pinned automatically, before their first copy to or from a GPU; pin a whole array
  // first when many handles lie inside it (the tiles of one matrix, which CUDA cannot pin
  // separately: TiledMatrix does this). Does nothing without a GPU, or when the range overlaps
  // one pinned already. The memory must stay allocated while the object lives.
  PinnedHostMemory pin_host_memory(void* data, std::size_t bytes);

  // --- Tasks ------------------------------------------------------------------------------

  // Submits a task of `type`. `args` are accesses (read(h), write(h), ...) and values
  // (value(x)) in the order of the body's parameters, and optionally priority(p), name("..."),
  // placement(rule) and work(w) anywhere among them.
  // Returns at once; the task runs when its data is ready. Throws std::invalid_argument on an
  // empty handle, a handle given twice, or a task type with no implementation for any present
  // device.
  template <class Cpu, class Cuda, class Emulated, class... Args>
  void submit(const TaskType<Cpu, Cuda, Emulated>& type, Args&&... args) {
    submit_type(false, type, std::forward<Args>(args)...);
  }

  // Submits a one-off task: `body` is called like a task type's CPU implementation, and runs on
  // a CPU worker unless a placement() option lets it run on emulated accelerators too.
  //   rt.submit("fill", [](versa::Span<int> v) { std::ranges::fill(v, 1); }, versa::write_only(h));
  template <class F, class... Args>
  requires(!std::is_convertible_v<F, std::string_view>) void submit(std::string_view name, F&& body,
                                                                    Args&&... args) {
    submit_body(false, name, std::forward<F>(body), std::forward<Args>(args)...);
  }

  // Like submit, but the task is a child of the calling task: the caller's sync() waits for it,
  // and the caller is not finished before its children are. Outside any task, the children
  // belong to the main program and sync() waits for them. A child must not access a handle its
  // parent holds (it would wait for the parent, which waits for it): that is refused with
  // std::invalid_argument.
  template <class Cpu, class Cuda, class Emulated, class... Args>
  void spawn(const TaskType<Cpu, Cuda, Emulated>& type, Args&&... args) {
    submit_type(true, type, std::forward<Args>(args)...);
  }
  template <class F, class... Args>
  requires(!std::is_convertible_v<F, std::string_view>) void spawn(std::string_view name, F&& body,
                                                                   Args&&... args) {
    using Closure = std::decay_t<F>;
    if constexpr (sizeof...(Args) == 0 && sizeof(Closure) <= detail::inline_closure_bytes &&
                  alignof(Closure) <= alignof(std::max_align_t) &&
                  std::is_nothrow_constructible_v<Closure, F&&> &&
                  Invoker<Closure, std::tuple<>>::invocable) {
      const detail::StartedChild child =
          start_child(name, &Invoker<Closure, std::tuple<>>::call, destroy_of<Closure>());
      if (child.task) {
        new (child.closure) Closure(std::forward<F>(body));
        submit_child(child.task);
        return;
      }
    }
    submit_body(true, name, std::forward<F>(body), std::forward<Args>(args)...);
  }

  // Waits until the children spawned by the calling task (or by the main program) have finished.
  // Inside a task the worker runs other ready tasks meanwhile, so recursion needs no blocked
  // threads. The partials of `add` accesses are applied lazily: read their result through a
  // task, acquire() or after wait_all(), or destroy the handle (which applies them) before
  // reading its memory directly.
  void sync();

  // Tasks queued on the calling thread's worker, where idle workers would take them from: 0 when
  // a task spawned now would be the only work there for them. A search that splits off part of
  // its work only when this is 0 spawns as many tasks as idle workers take, not a fixed share of
  // its work (examples/uts does). 0 on a thread that is no worker of this runtime.
  std::size_t surplus_tasks() const;

  // Copies the handle's data home (into the memory it was registered with) once the tasks
  // submitted before this call that write it have run, while later tasks run; the devices keep
  // their copies for the tasks that read it next. For data that is final long before wait_all()
  // (a factor's tile after its last update), so that its copy home overlaps the remaining work
  // instead of waiting for wait_all(), which copies home whatever has changed since: on an H200
  // the tiled Cholesky at n = 30000 ran 1.3x faster with each tile copied home once final
  // (docs/performance.md). A CPU task of no work that reads the data ("copy home"): the copy is
  // its fetch, and tasks that write the data after it wait for it. Being a read in program
  // order, it ends a run of commute or add accesses, as any read does (access_mode.hpp's
  // failure rule then starts a new run after it). Nothing to copy where the host's copy is
  // valid. Throws std::invalid_argument on an empty handle.
  void copy_home(const HandleBase& handle);

  // Waits until every submitted task has finished, with every `add` applied to its handle's
  // data and device results copied home. If tasks failed, throws TaskFailure for the
  // first failure (the others are reported on stderr) and clears the failure list. Throws
  // std::logic_error, losing nothing, where it would wait for a view from acquire() that the
  // calling thread holds: a task submitted after the view waits for it, or renamed data would
  // come home over it (docs/guide.md, "Host access").
  void wait_all();

  // Gives the calling thread access to a handle's data, in program order with the tasks: waits
  // for the tasks submitted earlier that the access depends on, and makes later conflicting tasks
  // wait until the returned view is destroyed.
  //   { auto x = rt.acquire(versa::read(hx)); use(x.view()); }
  // Throws TaskFailure when the data was to be produced by a task that failed, and
  // std::logic_error where the access would wait for a view of the same handle that the calling
  // thread holds (any pair of views but two reads of one run).
  template <class View>
  HostView<View> acquire(Access<View> access);

 private:
  template <class>
  friend class HostView;
  friend struct detail::RuntimeAccess;
  struct Impl;

  // A runtime of `config` as given, its environment variables applied already (versa::mpi's
  // local runtime, whose files are then named per rank).
  struct EnvironmentApplied {};
  Runtime(Config config, EnvironmentApplied);

  detail::HandleState* create_handle(const void* data, detail::Layout layout, std::string name);
  detail::HandleState* create_scratch(detail::Layout layout, std::string name);
  void submit_task(const detail::TaskDesc& desc);
  void copy_home(detail::HandleState* state);
  // The short way of spawn() for a body without accesses whose closure fits the task record:
  // the runtime makes the record, the caller constructs the closure in it, and submit_child
  // queues it; no description is built and nothing is moved. The task is null when the runtime
  // takes children the general way (outside a task; with devices, tracking, a trace or task
  // statistics).
  detail::StartedChild start_child(std::string_view name, detail::InvokeFn invoke,
                                   detail::DestroyFn destroy);
  void submit_child(detail::Task* task);
  template <class Closure>
  static constexpr detail::DestroyFn destroy_of() {
    if constexpr (std::is_trivially_destructible_v<Closure>) {
      return nullptr;
    } else {
      return [](void* c) { static_cast<Closure*>(c)->~Closure(); };
    }
  }
  const char* intern_name(std::string_view name);
  // Keeps a task type alive as long as this runtime may run it. The check comes first: the
  // conversion to the base's shared_ptr updates a reference count that shares a cache line with
  // the type, which the workers read for every task, so doing it per submission made that line
  // travel between cores twice per task.
  template <class State>
  void keep_alive(const std::shared_ptr<const State>& state) {
    if (!keeps(*state)) keep_type(state);
  }
  bool keeps(const detail::TaskTypeBase& type) const;
  void keep_type(const std::shared_ptr<const detail::TaskTypeBase>& type);
  void* acquire_host(detail::AccessRecord& record);
  void release_host(void* ticket) noexcept;
  // Throws std::logic_error where wait_all() would now wait for a view the calling thread holds.
  void refuse_waiting_on_own_views();

  struct Options {
    int priority = 0;
    const std::string* name = nullptr;
    const Placement* placement = nullptr;
    double work = -1;
  };

  template <class T>
  static void collect(const T& arg, detail::AccessRecord*& next, Options& options) {
    if constexpr (detail::is_access_v<T>) {
      next->handle = arg.handle;
      next->mode = arg.mode;
      ++next;
    } else if constexpr (std::is_same_v<T, Priority>) {
      options.priority = arg.value;
    } else if constexpr (std::is_same_v<T, TaskName>) {
      options.name = &arg.value;
    } else if constexpr (std::is_same_v<T, TaskPlacement>) {
      options.placement = &arg.value;
    } else if constexpr (std::is_same_v<T, Work>) {
      options.work = arg.value;
    } else if constexpr (detail::is_value_v<T>) {
      // stored in the closure by submit_type
    } else {
      static_assert(sizeof(T) == 0,
                    "submit arguments are accesses, value(), priority(), name(), placement() or "
                    "work()");
    }
  }

  // std::tuple<view> for an access argument, std::tuple<> for an option.
  template <class T, bool = detail::is_access_v<T>>
  struct AccessViewTuple {
    using type = std::tuple<>;
  };
  template <class T>
  struct AccessViewTuple<T, true> {
    using type = std::tuple<typename detail::IsAccess<std::remove_cvref_t<T>>::view>;
  };
  template <class T>
  using access_view_tuple = typename AccessViewTuple<T>::type;

  template <class F, class ViewTuple>
  struct Invoker;
  template <class F, class... Views>
  struct Invoker<F, std::tuple<Views...>> {
    static void call(void* closure, const detail::AccessRecord* accesses) {
      detail::invoke_with_views(*static_cast<F*>(closure), std::tuple<Views...>{}, accesses);
    }
    using Arguments =
        decltype(detail::view_arguments<Views...>(nullptr, std::index_sequence_for<Views...>()));
    static constexpr bool invocable = detail::is_applicable_v<F&, Arguments>;
  };

  template <class F, class... Args>
  void submit_with(bool child, const char* name, F&& closure, detail::InvokeFn invoke,
                   detail::Implementations devices, const Args&... args) {
    constexpr std::size_t n = (std::size_t{0} + ... + (detail::is_access_v<Args> ? 1 : 0));
    detail::AccessRecord records[n > 0 ? n : 1];
    [[maybe_unused]] detail::AccessRecord* next = records;
    Options options;
    (collect(args, next, options), ...);
    using Closure = std::decay_t<F>;
    detail::TaskDesc desc;  // every field set here (TaskDesc has no defaults, on purpose)
    desc.name = options.name ? intern_name(*options.name) : name;
    desc.type_name = name;
    desc.priority = options.priority;
    desc.accesses = records;
    desc.access_count = n;
    desc.invoke = invoke;
    desc.invoke_cuda = devices.cuda;
    desc.cuda_left_out = devices.cuda_left_out;
    desc.invoke_emulated = devices.emulated;
    desc.placement = options.placement ? *options.placement : devices.placement;
    desc.reduction = devices.reduction;
    desc.closure = &closure;
    desc.closure_size = sizeof(Closure);
    desc.closure_align = alignof(Closure);
    desc.move = [](void* dst, void* src) {
      new (dst) Closure(std::move(*static_cast<Closure*>(src)));
    };
    desc.destroy = destroy_of<Closure>();
    desc.is_child = child;
    desc.work = options.work;
    desc.work_hint = devices.work_hint;
    desc.runs_after_failed_copy = false;
    submit_task(desc);
  }

  // The value() arguments of a submit, in order, as std::tuple<T...>.
  template <class T>
  static auto value_part(T&& arg) {
    using A = std::remove_cvref_t<T>;
    if constexpr (detail::is_value_v<A>) {
      return std::tuple<typename A::type>(std::forward<T>(arg).value);
    } else {
      return std::tuple<>();
    }
  }
  template <class... Args>
  using value_tuple = decltype(std::tuple_cat(value_part(std::declval<Args>())...));

  // A task of a type: the type's implementations and the task's values.
  template <class State, class Values>
  struct TypedClosure {
    const State* state;
    [[no_unique_address]] Values values;
  };

  // How many of the first I arguments are accesses (Accesses) or values (!Accesses).
  template <bool Accesses, std::size_t I, class... Args>
  static constexpr std::size_t count_before() {
    constexpr bool counted[] = {
        (Accesses ? detail::is_access_v<Args> : detail::is_value_v<Args>)..., false};
    std::size_t n = 0;
    for (std::size_t i = 0; i < I; ++i) n += counted[i] ? 1 : 0;
    return n;
  }
  // The body's arguments for submit argument Arg: a view for an access, a const reference for a
  // value, nothing for an option (or a token).
  template <class Arg, std::size_t AccessIndex, std::size_t ValueIndex, class Values>
  static auto argument_of(const detail::AccessRecord* accesses, const Values& values) {
    if constexpr (detail::is_access_v<Arg>) {
      return detail::view_argument<typename detail::IsAccess<std::remove_cvref_t<Arg>>::view>(
          accesses[AccessIndex]);
    } else if constexpr (detail::is_value_v<Arg>) {
      return std::tuple<const std::tuple_element_t<ValueIndex, Values>&>(
          std::get<ValueIndex>(values));
    } else {
      (void)accesses;
      (void)values;
      return std::tuple<>();
    }
  }
  template <class... Args, class Values, std::size_t... I>
  static auto arguments_of(const detail::AccessRecord* accesses, const Values& values,
                           std::index_sequence<I...>) {
    (void)accesses;  // a task without arguments
    (void)values;
    return std::tuple_cat(
        argument_of<Args, count_before<true, I, Args...>(), count_before<false, I, Args...>()>(
            accesses, values)...);
  }

  template <class Cpu, class Cuda, class Emulated, class... Args>
  void submit_type(bool child, const TaskType<Cpu, Cuda, Emulated>& type, Args&&... args) {
    using State = typename TaskType<Cpu, Cuda, Emulated>::State;
    using Values = value_tuple<Args...>;
    using Closure = TypedClosure<State, Values>;
    static_assert(std::tuple_size_v<Values> > 0 || sizeof(Closure) == sizeof(const State*),
                  "a task without values keeps a pointer-sized closure");
    using Sequence = std::index_sequence_for<Args...>;
    using Arguments =
        decltype(arguments_of<Args...>(nullptr, std::declval<const Values&>(), Sequence()));
    keep_alive(type.state());
    Closure closure{type.state().get(), std::tuple_cat(value_part(std::forward<Args>(args))...)};
    detail::InvokeFn invoke = nullptr;
    detail::InvokeCudaFn invoke_cuda = nullptr;
    detail::InvokeFn invoke_emulated = nullptr;
    if constexpr (detail::is_implementation_v<Cpu>) {
      static_assert(detail::is_applicable_v<const Cpu&, Arguments>,
                    "the task type's CPU implementation cannot be called with the views of these "
                    "accesses and these values (read gives Span<const T>/Tile<const T>; tokens "
                    "pass nothing; value(x) gives const X&)");
      invoke = [](void* c, const detail::AccessRecord* accesses) {
        const Closure& task = *static_cast<const Closure*>(c);
        std::apply(task.state->cpu, arguments_of<Args...>(accesses, task.values, Sequence()));
      };
    }
    if constexpr (detail::is_implementation_v<Cuda>) {
      static_assert(
          detail::is_applicable_v<const Cuda&,
                                  decltype(std::tuple_cat(std::declval<std::tuple<CudaContext&>>(),
                                                          std::declval<Arguments>()))>,
          "the task type's CUDA implementation cannot be called with (CudaContext&, "
          "views and values of this submit...)");
      invoke_cuda = [](void* c, const detail::AccessRecord* accesses, CudaContext& context) {
        const Closure& task = *static_cast<const Closure*>(c);
        std::apply([&](auto&&... a) { task.state->cuda(context, a...); },
                   arguments_of<Args...>(accesses, task.values, Sequence()));
      };
    }
    if constexpr (detail::is_implementation_v<Emulated>) {
      static_assert(detail::is_applicable_v<const Emulated&, Arguments>,
                    "the task type's emulated implementation cannot be called with the views "
                    "and values of this submit");
      invoke_emulated = [](void* c, const detail::AccessRecord* accesses) {
        const Closure& task = *static_cast<const Closure*>(c);
        std::apply(task.state->emulated, arguments_of<Args...>(accesses, task.values, Sequence()));
      };
    } else {
      invoke_emulated = invoke;
    }
    const State* state = closure.state;
    submit_with(
        child, type.name().c_str(), closure, invoke,
        detail::Implementations{invoke_cuda, invoke_emulated, state->settings.placement,
                                state->settings.reduction.get(), state->settings.cuda_left_out,
                                state->settings.work ? &state->settings.work : nullptr},
        args...);
  }

  template <class F, class... Args>
  void submit_body(bool child, std::string_view name, F&& body, const Args&... args) {
    static_assert((!detail::is_value_v<Args> && ...),
                  "value() is for task types: a one-off body captures its values");
    using Views = decltype(std::tuple_cat(std::declval<access_view_tuple<Args>>()...));
    using Closure = std::decay_t<F>;
    static_assert(Invoker<Closure, Views>::invocable,
                  "the task body cannot be called with the views of these accesses (read gives "
                  "Span<const T>/Tile<const T>; tokens pass nothing)");
    Closure closure(std::forward<F>(body));
    submit_with(child, intern_name(name), closure, &Invoker<Closure, Views>::call,
                detail::Implementations{nullptr, &Invoker<Closure, Views>::call,
                                        Placement::cpu_only, nullptr, false, nullptr},
                args...);
  }

  std::unique_ptr<Impl> impl_;
};

// Host access to a handle's data, obtained from Runtime::acquire. Releases the access (letting
// later tasks run) when destroyed. Movable, not copyable.
template <class View>
class HostView {
 public:
  HostView(HostView&& other) noexcept
      : runtime_(std::exchange(other.runtime_, nullptr)),
        ticket_(std::exchange(other.ticket_, nullptr)),
        view_(other.view_) {}
  HostView& operator=(HostView&&) = delete;
  ~HostView() { release(); }

  // The data, valid until release() or destruction.
  const View& view() const { return view_; }
  const View* operator->() const { return &view_; }
  decltype(auto) operator[](std::size_t i) const requires requires(View v) { v[i]; }
  { return view_[i]; }

  // Ends the access early.
  void release() noexcept {
    if (runtime_) runtime_->release_host(ticket_);
    runtime_ = nullptr;
    ticket_ = nullptr;
  }

 private:
  friend class Runtime;
  HostView(Runtime* runtime, void* ticket, View view)
      : runtime_(runtime), ticket_(ticket), view_(view) {}
  Runtime* runtime_;
  void* ticket_;
  View view_;
};

// Host memory page-locked by Runtime::pin_host_memory; unpinned when destroyed (or when the
// Runtime is, whichever comes first). Movable.
class PinnedHostMemory {
 public:
  PinnedHostMemory() = default;
  PinnedHostMemory(PinnedHostMemory&& other) noexcept = default;
  PinnedHostMemory& operator=(PinnedHostMemory&& other) noexcept {
    if (this != &other) {
      release();
      pins_ = std::move(other.pins_);
      data_ = other.data_;
    }
    return *this;
  }
  ~PinnedHostMemory() { release(); }

  // Whether the memory was pinned (false without a GPU).
  explicit operator bool() const { return pins_ != nullptr; }

 private:
  friend class Runtime;
  PinnedHostMemory(std::shared_ptr<detail::HostPins> pins, const void* data)
      : pins_(std::move(pins)), data_(data) {}
  void release() noexcept {
    if (pins_) detail::unpin(*pins_, data_);
    pins_.reset();
  }
  std::shared_ptr<detail::HostPins> pins_;
  const void* data_ = nullptr;
};

template <class View>
HostView<View> Runtime::acquire(Access<View> access) {
  detail::AccessRecord record;
  record.handle = access.handle;
  record.mode = access.mode;
  void* ticket = acquire_host(record);
  if constexpr (std::is_same_v<View, detail::NoView>) {
    return HostView<View>(this, ticket, View{});
  } else {
    return HostView<View>(this, ticket, detail::make_view<View>(record));
  }
}

}  // namespace versa
