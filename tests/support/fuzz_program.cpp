#include "support/fuzz_program.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <stdexcept>

namespace versa::fuzz {

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL + (a << 6) + (a >> 2));
  x ^= x >> 31;
  return x * 0xBF58476D1CE4E5B9ULL;
}

// Multiplications commute with each other, not with commute's additions: a run of their own.
constexpr versa::AccessType multiply{.reorderable = true, .group = 1};
constexpr AccessMode multiply_mode = multiply.mode();

// The effect of one task on the values it accesses, in access order. Returns what it observed.
Value apply(const TaskSpec& task, Value* const* values) {
  Value observed = mix(task.id, 0);
  for (std::size_t i = 0; i < task.accesses.size(); ++i) {
    const AccessMode mode = task.accesses[i].mode;
    if (mode == AccessMode::read || mode == AccessMode::write)
      observed = mix(mix(observed, values[i][0]), values[i][width - 1]);
  }
  for (std::size_t i = 0; i < task.accesses.size(); ++i) {
    Value& v = *values[i];
    switch (task.accesses[i].mode) {
      case AccessMode::read:
        break;
      case AccessMode::write:
        v = mix(v, observed + i);
        break;
      case AccessMode::write_only:
        v = observed ^ i;
        break;
      case AccessMode::commute:
        v += (observed | 1) * (i + 1);
        break;
      case AccessMode::add:
        for (int k = 0; k < width; ++k) values[i][k] += (observed | 1) * (i + 1) * (k + 1);
        break;
      default:  // multiply
        v *= (observed | 1) * (2 * i + 1);
        break;
    }
    if (modifies(task.accesses[i].mode) && task.accesses[i].mode != AccessMode::add)
      for (int k = 1; k < width; ++k) values[i][k] = mix(v, k);
  }
  if (task.spin_ns > 0) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(task.spin_ns);
    while (std::chrono::steady_clock::now() < end) {
    }
  }
  return observed;
}

Value fold_children(const std::vector<Value>& locals) {
  Value folded = 0;
  for (Value v : locals) folded = mix(folded, v);
  return folded;
}

// The first write's block after folding the children into its first value.
void fold_into(Value* block, const std::vector<Value>& locals) {
  block[0] = mix(block[0], fold_children(locals));
  for (int k = 1; k < width; ++k) block[k] = mix(block[0], k);
}

TaskSpec random_task(std::mt19937_64& rng, int id, int handles, int depth, int fail_one_in = 0) {
  TaskSpec task;
  task.id = id;
  const int count = 1 + static_cast<int>(rng() % 4);
  std::vector<int> chosen;
  while (static_cast<int>(chosen.size()) < std::min(count, handles)) {
    const int h = static_cast<int>(rng() % handles);
    if (std::find(chosen.begin(), chosen.end(), h) == chosen.end()) chosen.push_back(h);
  }
  static constexpr AccessMode modes[] = {
      AccessMode::read,    AccessMode::read, AccessMode::write,      AccessMode::write_only,
      AccessMode::commute, AccessMode::add,  AccessMode::write_only, multiply_mode};
  for (int h : chosen) task.accesses.push_back({h, modes[rng() % 8]});
  if (rng() % 10 == 0) task.spin_ns = static_cast<int>(rng() % 20000);
  static constexpr versa::Placement rules[] = {
      versa::Placement::automatic, versa::Placement::cpu_only, versa::Placement::gpu_only,
      versa::Placement::prefer_gpu};
  task.placement = rules[rng() % 4];
  task.priority = id % 7 == 0 ? 1 : id % 7 == 1 ? -1 : 0;
  const bool has_write =
      std::any_of(task.accesses.begin(), task.accesses.end(),
                  [](const AccessSpec& a) { return a.mode == AccessMode::write; });
  if (depth == 0 && has_write && rng() % 8 == 0) {
    const int children = 2 + static_cast<int>(rng() % 5);
    for (int c = 0; c < children; ++c)
      task.children.push_back(random_task(rng, id * 16 + c, private_handles, depth + 1));
  }
  if (depth == 0 && fail_one_in > 0 && rng() % fail_one_in == 0)
    task.fails = rng() % 2 ? Failing::before_updates : Failing::after_updates;
  // Failures spread along the data flow faster than random write_only accesses end them: with
  // failures, some tasks only reset a handle, so that programs keep valid and failed data.
  if (depth == 0 && fail_one_in > 0 && task.fails == Failing::no && task.children.empty() &&
      rng() % 4 == 0)
    task.accesses = {{task.accesses[0].handle, AccessMode::write_only}};
  return task;
}

Program random_program(std::uint64_t seed, int tasks, int handles, int fail_one_in) {
  std::mt19937_64 rng(seed);
  Program program;
  program.handles = handles;
  for (int i = 0; i < tasks; ++i)
    program.tasks.push_back(random_task(rng, i, handles, 0, fail_one_in));
  return program;
}

int first_write(const TaskSpec& task) {
  for (std::size_t i = 0; i < task.accesses.size(); ++i)
    if (task.accesses[i].mode == AccessMode::write) return static_cast<int>(i);
  return -1;
}

// Every third handle starts at zero, and the runtime is told so (declare_zero): devices then
// fill their copies with zeros until the host's copy changes.
bool starts_at_zero(int h) { return h % 3 == 2; }

// Every sixth (half of those that start at zero) is scratch data (Runtime::scratch): the
// runtime's memory, read through acquire() at the end.
bool is_scratch(int h) { return h % 6 == 5; }

Value initial_value(int h, int k) { return starts_at_zero(h) ? Value{0} : mix(h, 12345 + k); }

std::vector<Value> initial_data(int handles) {
  std::vector<Value> data(static_cast<std::size_t>(handles) * width);
  for (int h = 0; h < handles; ++h)
    for (int k = 0; k < width; ++k) data[h * width + k] = initial_value(h, k);
  return data;
}

// --- Sequential reference ------------------------------------------------------------------

void run_sequentially(const TaskSpec& task, std::vector<Value>& data, Value& observed) {
  std::vector<Value*> values;
  for (const AccessSpec& a : task.accesses) values.push_back(&data[a.handle * width]);
  observed = apply(task, values.data());
  if (!task.children.empty()) {
    std::vector<Value> locals(private_handles * width, 0);
    for (const TaskSpec& child : task.children) {
      Value ignored;
      run_sequentially(child, locals, ignored);
    }
    if (const int w = first_write(task); w >= 0) fold_into(values[w], locals);
  }
}

// The failure state of one handle in the sequential model.
struct HandleFailure {
  bool failed = false;
  bool failed_before_run = false;           // when the current run of commutes or adds began
  AccessMode run_mode = AccessMode::write;  // write: no run of commutes or adds open
};

// Whether `task` is cancelled, as the failure rule says, given the handles' states; advances
// the run bookkeeping of the handles it accesses.
bool cancelled_by_failures(const TaskSpec& task, std::vector<HandleFailure>& handles) {
  bool cancelled = false;
  for (const AccessSpec& a : task.accesses) {
    HandleFailure& h = handles[a.handle];
    if (!is_unordered(a.mode)) {
      h.run_mode = AccessMode::write;
    } else if (h.run_mode != a.mode) {
      h.run_mode = a.mode;
      h.failed_before_run = h.failed;
    }
    // A run of commutes (or multiplications) reads what was there before the run.
    if (reads_contents(a.mode)) cancelled |= is_unordered(a.mode) ? h.failed_before_run : h.failed;
  }
  return cancelled;
}

// The handle that Versa copies home after `task` (Runtime::copy_home), or -1: every eighth
// task's first. A read in program order, which ends a run of commutes or adds as any read does.
int copied_home_after(const TaskSpec& task) {
  return task.id % 8 == 5 ? task.accesses.front().handle : -1;
}

Outcome sequential(const Program& program) {
  Outcome outcome{initial_data(program.handles),
                  std::vector<Value>(program.tasks.size()),
                  {},
                  std::vector<bool>(program.handles),
                  0};
  std::vector<HandleFailure> handles(program.handles);
  auto run = [&outcome, &handles](const TaskSpec& task) {
    const bool cancelled = cancelled_by_failures(task, handles);
    outcome.cancelled += cancelled;
    if (cancelled || task.fails != Failing::no) {
      for (const AccessSpec& a : task.accesses)
        if (modifies(a.mode)) handles[a.handle].failed = true;
      return;
    }
    run_sequentially(task, outcome.data, outcome.observed[task.id]);
    for (const AccessSpec& a : task.accesses)
      if (overwrites(a.mode)) handles[a.handle].failed = false;
  };
  for (const TaskSpec& task : program.tasks) {
    run(task);
    if (const int h = copied_home_after(task); h >= 0) {
      TaskSpec copy_home;
      copy_home.accesses = {{h, AccessMode::read}};
      cancelled_by_failures(copy_home, handles);  // cancelled or not, it changes nothing
    }
  }
  for (int h = 0; h < program.handles; ++h) outcome.failed[h] = handles[h].failed;
  return outcome;
}

// --- Versa ----------------------------------------------------------------------------------

// The fuzzer drives the modes at run time, so it builds accesses directly with a read-only view
// type for every mode and writes through the pointers of the modifying ones (a typed program
// would use read()/write()/..., which fix the view type at compile time).
using AnyAccess = versa::Access<versa::Span<const Value>>;

void submit(versa::Runtime& rt, const TaskSpec& task,
            const std::vector<versa::Handle<Value>>& handles, Value* observed, bool child,
            bool devices) {
  std::vector<AnyAccess> accesses;
  for (const AccessSpec& a : task.accesses)
    accesses.push_back({versa::detail::state_of(handles[a.handle]), a.mode});
  auto body = [&rt, &task, observed](auto... views) {
    Value* values[] = {const_cast<Value*>(views.data())...};
    if (task.fails == Failing::before_updates) throw std::runtime_error("injected failure");
    const Value seen = apply(task, values);
    if (task.fails == Failing::after_updates) throw std::runtime_error("injected failure");
    if (observed) *observed = seen;
    if (!task.children.empty()) {
      std::vector<Value> locals(private_handles * width, 0);
      std::vector<versa::Handle<Value>> local_handles;
      for (int h = 0; h < private_handles; ++h)
        local_handles.push_back(rt.data(&locals[h * width], width));
      for (auto& h : local_handles) h.set_reduction(versa::sum<Value>());
      for (const TaskSpec& c : task.children) submit(rt, c, local_handles, nullptr, true, false);
      rt.sync();
      local_handles.clear();  // applies the children's adds to `locals`
      // Children exist only under a task with a write (random_task).
      if (const int w = first_write(task); w >= 0) fold_into(values[w], locals);
    }
  };
  const auto where = versa::placement(devices ? task.placement : versa::Placement::cpu_only);
  auto go = [&](auto... a) {
    const versa::Priority priority = versa::priority(task.priority);
    if (child) {
      rt.spawn("child", body, priority, a...);
    } else {
      rt.submit("task", body, where, priority, a...);
    }
  };
  switch (accesses.size()) {
    case 1:
      go(accesses[0]);
      break;
    case 2:
      go(accesses[0], accesses[1]);
      break;
    case 3:
      go(accesses[0], accesses[1], accesses[2]);
      break;
    case 4:
      go(accesses[0], accesses[1], accesses[2], accesses[3]);
      break;
    default:
      throw std::logic_error("a fuzz task has 1 to 4 accesses");
  }
}

Outcome parallel(const Program& program, versa::Config config) {
  versa::Runtime rt{config};
  const bool devices = !config.emulated_devices.empty() || !config.other_devices.empty();
  Outcome outcome{initial_data(program.handles),
                  std::vector<Value>(program.tasks.size()),
                  {},
                  std::vector<bool>(program.handles),
                  0};
  std::vector<versa::Handle<Value>> handles;
  for (int h = 0; h < program.handles; ++h) {
    handles.push_back(is_scratch(h) ? rt.scratch<Value>(width)
                                    : rt.data(&outcome.data[h * width], width));
    handles.back().set_reduction(versa::sum<Value>());
    if (starts_at_zero(h) && !is_scratch(h)) handles.back().declare_zero();
    // Every fourth is not written back at wait_all: the reads below bring it home.
    if (h % 4 == 3) handles.back().set_write_back(false);
  }
  for (const TaskSpec& task : program.tasks) {
    submit(rt, task, handles, &outcome.observed[task.id], false, devices);
    if (const int h = copied_home_after(task); h >= 0) rt.copy_home(handles[h]);
  }
  try {
    rt.wait_all();
  } catch (const versa::TaskFailure& failure) {
    outcome.reported = failure.what();
  }
  // A handle is failed when reading it reports the failure. Reading brings it home.
  for (int h = 0; h < program.handles; ++h) {
    try {
      const auto view = rt.acquire(versa::read(handles[h]));
      if (is_scratch(h)) std::copy(view->begin(), view->end(), &outcome.data[h * width]);
    } catch (const versa::TaskFailure&) {
      outcome.failed[h] = true;
    }
  }
  outcome.statistics = rt.statistics();
  outcome.renamed = rt.renamed_accesses();
  return outcome;
}

bool has_failures(const Program& program) {
  return std::any_of(program.tasks.begin(), program.tasks.end(),
                     [](const TaskSpec& t) { return t.fails != Failing::no; });
}

}  // namespace versa::fuzz
