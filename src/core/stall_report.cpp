#include "core/stall_report.hpp"

#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "data/handle_state.hpp"

namespace versa::detail {

namespace {

// Lines shown per handle and in all, so that a stalled program of a million tasks still gives a
// report one can read.
constexpr std::size_t max_lines = 8;
constexpr std::size_t max_handles = 32;
constexpr int max_chain = 16;

std::string handle_label(const HandleState& handle) {
  return handle.name().empty() ? "handle #" + std::to_string(handle.id())
                               : "handle '" + handle.name() + "'";
}

// The index of `task`'s access to `handle` (a task accesses a handle once), or access_count.
std::uint32_t access_to(const Task& task, const HandleState* handle) {
  std::uint32_t i = 0;
  while (i < task.access_count && task.accesses[i].handle != handle) ++i;
  return i;
}

std::string plural(std::uint64_t count, const char* word, const char* words) {
  return std::to_string(count) + " " + (count == 1 ? word : words);
}

// What the report gathers of one handle.
struct HandleReport {
  const HandleState* handle = nullptr;  // compared only: gone, maybe, once the registry unlocks
  std::string label;
  HandleState::Snapshot snapshot{};
  int host_views = 0;
  std::size_t waiting_count = 0;
  std::vector<std::string> waiting;                            // the first max_lines
  std::vector<const Task*> waiters;                            // tracked, head first
  std::vector<std::pair<const Task*, std::uint32_t>> holders;  // (task, access index)
};

// A tracked task parked at a handle: for a version, or for its exclusive flag.
struct Parked {
  std::size_t report;  // its handle's HandleReport
  std::uint64_t needs;
  bool for_flag;
};

// Everything read while the registry of tasks is locked (tasks listed there cannot finish).
class Gathering {
 public:
  Gathering(HandleRegistry& handles, TaskTracker& tracker, const std::vector<std::string>& nodes);
  std::string text(const std::string& header, std::int64_t pending) const;

 private:
  struct Running {
    int worker;
    bool innermost;
  };

  void inspect(HandleState& handle);
  void find_holders();
  std::string who(const Task& task, std::uint32_t index) const;
  std::string doing(const Task& task) const;
  void write_handle(std::string& out, const HandleReport& report) const;
  std::string chain_from(const Task* waiter) const;

  const bool tracking_;
  const std::vector<std::string>& nodes_;
  std::unordered_map<const Task*, LiveTasks::Placement> listed_;
  std::unordered_map<const Task*, Running> running_;
  std::unordered_map<const Task*, Parked> parked_;
  std::vector<HandleReport> reports_;
  std::unordered_map<const HandleState*, std::size_t> report_of_;
  std::unordered_set<const Task*> holding_;  // tasks that hold some handle reported
};

Gathering::Gathering(HandleRegistry& handles, TaskTracker& tracker,
                     const std::vector<std::string>& nodes)
    : tracking_(tracker.tracking()), nodes_(nodes) {
  for (const auto& [task, where] : tracker.live().listed()) listed_.emplace(task, where);
  tracker.activity().for_each_running([this](const Task* task, int worker, bool innermost) {
    running_[task] = {worker, innermost};
  });
  handles.for_each([this](HandleState& handle) { inspect(handle); });
  find_holders();
}

void Gathering::inspect(HandleState& handle) {
  HandleReport report;
  report.handle = &handle;
  report.label = handle_label(handle);
  report.host_views = handle.host_views();
  const std::size_t index = reports_.size();
  // Under the handle's lock: the parked tasks cannot be woken, so their fields may be read
  // whether or not they are listed; what is kept of the unlisted ones is copied out.
  report.snapshot = handle.inspect([&](const Waiter& waiter, bool for_flag) {
    const Task& task = *static_cast<const Task*>(waiter.owner);
    const std::uint32_t i = access_to(task, &handle);
    if (++report.waiting_count <= max_lines)
      report.waiting.push_back(
          who(task, i) + (for_flag ? " waits for the exclusive flag"
                                   : " needs version " + std::to_string(waiter.wait_version)));
    if (listed_.count(&task) == 0) return;
    report.waiters.push_back(&task);
    parked_[&task] = {index, waiter.wait_version, for_flag};
  });
  if (report.waiting_count == 0 && report.host_views == 0) return;
  report_of_.emplace(&handle, index);
  reports_.push_back(std::move(report));
}

// The holders of a handle are the unfinished accesses allowed on it: those whose required
// version the handle has reached (a task parked at it for its flag waits, it does not hold).
void Gathering::find_holders() {
  for (const auto& [task, where] : listed_) {
    for (std::uint32_t i = 0; i < task->access_count; ++i) {
      auto found = report_of_.find(task->accesses[i].handle);
      if (found == report_of_.end()) continue;
      HandleReport& report = reports_[found->second];
      if (task->progress(i).required_version > report.snapshot.version) continue;
      auto parked = parked_.find(task);
      if (parked != parked_.end() && parked->second.report == found->second) continue;
      report.holders.emplace_back(task, i);
      holding_.insert(task);
    }
  }
}

// "task 'x' (write)", "the reduction flush (write)", "a host view from acquire(read)".
std::string Gathering::who(const Task& task, std::uint32_t index) const {
  const char* mode = index < task.access_count ? to_string(task.accesses[index].mode) : "?";
  if (task.host_access)
    return task.host_ready.load(std::memory_order_acquire)
               ? std::string("a host view from acquire(") + mode + ")"
               : std::string("acquire(") + mode + ")";
  if (task.reduction_flush) return std::string("the reduction flush (") + mode + ")";
  return "task '" + std::string(task.name ? task.name : "") + "' (" + mode + ")";
}

// What a listed task that is not finished is doing.
std::string Gathering::doing(const Task& task) const {
  if (auto parked = parked_.find(&task); parked != parked_.end()) {
    const std::string& handle = reports_[parked->second.report].label;
    return parked->second.for_flag
               ? "waiting for the exclusive flag of " + handle
               : "parked at " + handle + ", needs version " + std::to_string(parked->second.needs);
  }
  if (task.host_access)
    return task.host_ready.load(std::memory_order_acquire)
               ? "not released"
               : "waiting for its data to be copied home";
  if (auto running = running_.find(&task); running != running_.end())
    return "running on cpu worker " + std::to_string(running->second.worker) +
           (running->second.innermost ? "" : " (in a sync(), running other tasks meanwhile)");
  const LiveTasks::Placement where = listed_.at(&task);
  if (where.node > 0) {
    const std::string device = static_cast<std::size_t>(where.node) < nodes_.size()
                                   ? "device '" + nodes_[where.node] + "'"
                                   : "device " + std::to_string(where.node);
    return where.launched ? "on " + device + ": running, queued on its streams, or waiting for one"
                          : "handed to " + device + ", waiting for device memory or input copies";
  }
  return "ready, waiting for a CPU worker or for placement";
}

void Gathering::write_handle(std::string& out, const HandleReport& report) const {
  const HandleState::Snapshot& s = report.snapshot;
  out += report.label + ": version " + std::to_string(s.version) + ", " +
         plural(s.registered, "access", "accesses") + " registered";
  if (s.exclusive_held) out += ", exclusive flag taken";
  if (report.host_views > 0)
    out += ", " + plural(report.host_views, "host view", "host views") + " open";
  out += "\n";
  for (const std::string& line : report.waiting) out += "  waiting: " + line + "\n";
  if (report.waiting_count > report.waiting.size())
    out += "  waiting: ... and " + std::to_string(report.waiting_count - report.waiting.size()) +
           " more\n";
  std::size_t shown = 0;
  for (const auto& [task, index] : report.holders) {
    if (++shown > max_lines) {
      out += "  held by: ... and " + std::to_string(report.holders.size() - max_lines) + " more\n";
      break;
    }
    out += "  held by: " + who(*task, index) + ", from version " +
           std::to_string(task->progress(index).required_version) + ": " + doing(*task) + "\n";
  }
  if (!tracking_)
    out += "  held by: " + std::string(report.holders.empty() ? "unknown" : "others unknown") +
           " (tasks are tracked with Config::track_tasks or VERSA_TRACK_TASKS=1)\n";
  else if (report.holders.empty() && report.waiting_count > 0)
    out += "  held by: no unfinished access found (one may just have finished)\n";
}

// "task 'c' (read) -> handle 'b' -> task 'b' (write) -> handle 'a' -> a host view ...: ...".
std::string Gathering::chain_from(const Task* waiter) const {
  std::unordered_set<const Task*> seen{waiter};
  std::string chain = who(*waiter, access_to(*waiter, reports_[parked_.at(waiter).report].handle));
  const Task* current = waiter;
  for (int step = 0; step < max_chain; ++step) {
    const Parked& parked = parked_.at(current);
    const HandleReport& report = reports_[parked.report];
    chain += " -> " + report.label;
    if (report.holders.empty()) return chain + " -> (no holder found)";
    // Follow a holder that waits itself, to reach the one that does not.
    auto next = report.holders.front();
    for (const auto& holder : report.holders)
      if (parked_.count(holder.first) != 0) next = holder;
    chain += " -> " + who(*next.first, next.second);
    if (parked_.count(next.first) == 0) return chain + ": " + doing(*next.first);
    if (!seen.insert(next.first).second)
      return chain + " (a cycle: these tasks wait for each other)";
    current = next.first;
  }
  return chain + " -> ...";
}

std::string Gathering::text(const std::string& header, std::int64_t pending) const {
  std::string out = header + "\n";
  out +=
      plural(static_cast<std::uint64_t>(pending > 0 ? pending : 0), "task", "tasks") + " pending; ";
  if (reports_.empty()) return out + "no task is parked at a handle and no host view is open\n";
  out += plural(reports_.size(), "handle", "handles") + " with parked tasks or open host views:\n";
  for (std::size_t i = 0; i < reports_.size() && i < max_handles; ++i)
    write_handle(out, reports_[i]);
  if (reports_.size() > max_handles)
    out += "... and " + plural(reports_.size() - max_handles, "more handle", "more handles") + "\n";
  // Chains: from the first waiter of each handle that holds nothing itself, when its holder
  // is parked in turn.
  std::vector<std::string> chains;
  for (const HandleReport& report : reports_) {
    if (report.waiters.empty() || holding_.count(report.waiters.front()) != 0) continue;
    const HandleReport& first = reports_[parked_.at(report.waiters.front()).report];
    bool deeper = false;
    for (const auto& holder : first.holders) deeper = deeper || parked_.count(holder.first) != 0;
    if (deeper && chains.size() < max_lines) chains.push_back(chain_from(report.waiters.front()));
  }
  for (const std::string& chain : chains) out += "chain: " + chain + "\n";
  return out;
}

}  // namespace

std::string StallReport::describe(const std::string& header, std::int64_t pending) {
  std::string text;
  tracker_.live().while_locked([&] {
    const Gathering gathering(handles_, tracker_, node_names_);
    text = gathering.text(header, pending);
  });
  return text;
}

}  // namespace versa::detail
