#include "core/placement.hpp"

#include <algorithm>
#include <limits>

#include "base/task.hpp"
#include "core/data_mover.hpp"
#include "core/device_worker.hpp"
#include "data/handle_state.hpp"

namespace versa {
const char* to_string(Placement rule) {
  switch (rule) {
    case Placement::automatic:
      return "automatic";
    case Placement::cpu_only:
      return "cpu_only";
    case Placement::gpu_only:
      return "gpu_only";
    case Placement::prefer_gpu:
      return "prefer_gpu";
  }
  return "unknown";
}
}  // namespace versa

namespace versa::detail {

namespace {
// Heap order of a group's tasks: the top runs first.
using PooledTask = std::pair<Task*, std::uint64_t>;

bool runs_later(const PooledTask& a, const PooledTask& b) {
  if (a.first->priority != b.first->priority) return a.first->priority < b.first->priority;
  return a.second > b.second;
}

// Takes entry `i` out of `heap` (ordered by runs_later), keeping it a heap.
PooledTask take_from_heap(std::vector<PooledTask>& heap, std::size_t i) {
  const PooledTask taken = heap[i];
  heap[i] = heap.back();
  heap.pop_back();
  const std::size_t size = heap.size();
  if (i == size) return taken;
  while (i > 0 && runs_later(heap[(i - 1) / 2], heap[i])) {
    std::swap(heap[(i - 1) / 2], heap[i]);
    i = (i - 1) / 2;
  }
  for (;;) {
    std::size_t first = i;
    for (const std::size_t child : {2 * i + 1, 2 * i + 2})
      if (child < size && runs_later(heap[first], heap[child])) first = child;
    if (first == i) return taken;
    std::swap(heap[i], heap[first]);
    i = first;
  }
}
}  // namespace

PlacementPolicy::PlacementPolicy(std::vector<Node> nodes, int cpu_workers, PerfModel& model)
    : nodes_(std::move(nodes)),
      links_(nodes_),
      cpu_workers_(cpu_workers),
      model_(model),
      projected_(nodes_.size()),
      resident_miss_(nodes_.size(), std::numeric_limits<std::uint64_t>::max()) {}

bool PlacementPolicy::can_run(const Task& task, int node) const {
  const Placement excluded = node == 0 ? Placement::gpu_only : Placement::cpu_only;
  return task.has_implementation(nodes_[node].slot) && task.placement != excluded;
}

std::string PlacementPolicy::present_kinds() const {
  std::string kinds;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    bool seen = false;
    for (std::size_t j = 0; j < i; ++j) seen |= nodes_[j].kind == nodes_[i].kind;
    if (!seen) kinds += (kinds.empty() ? "" : ", ") + nodes_[i].kind_name;
  }
  return kinds;
}

std::size_t PlacementPolicy::data_bytes(const Task& task) {
  std::size_t bytes = 0;
  for (std::uint32_t i = 0; i < task.access_count; ++i)
    bytes += task.accesses[i].handle->layout()->bytes();
  return bytes;
}

std::optional<double> PlacementPolicy::transfer_seconds(const Task& task, int node,
                                                        bool host_data_only) const {
  double seconds = 0;
  for (std::uint32_t i = 0; i < task.access_count; ++i) {
    const AccessRecord& access = task.accesses[i];
    ReplicaSet* replicas = access.handle->replicas();
    if (!replicas || overwrites(access.mode)) continue;
    int source = -1;
    bool zeros = false;
    {
      MutexLock guard(replicas->mutex());
      if (is_valid(replicas->at(node).state)) continue;
      if (host_data_only && modifies(access.mode) && reads_contents(access.mode))
        return std::nullopt;  // node 0's replica, the host's, is stale
      if (Replica* from = links_.source_for(*replicas, node)) source = from->node;
      if (source == 0)
        if (Replica* landing = links_.landing_on_peer(*replicas, node)) source = landing->node;
      zeros = source == 0 && replicas->host_zero();
    }
    if (zeros) {  // filled on the device: no host link crossed
      seconds += nodes_[node].device->latency();
      continue;
    }
    const double bytes = static_cast<double>(access.handle->layout()->bytes());
    if (node > 0 && source > 0 && links_.linked(node, source)) {
      const Device& device = *nodes_[node].device;
      const Device& peer = *nodes_[source].device;
      const double bandwidth = device.peer_bandwidth(peer);
      seconds += device.peer_latency(peer) + (bandwidth > 0 ? bytes / bandwidth : 0);
      continue;
    }
    // Host to device, device to host, or both when device to device without a peer link.
    for (int hop : {node, source}) {
      if (hop <= 0) continue;
      const Device& device = *nodes_[hop].device;
      seconds += device.latency() + (device.bandwidth() > 0 ? bytes / device.bandwidth() : 0);
    }
  }
  return seconds;
}

int PlacementPolicy::lanes(int node) const {
  return node == 0 ? cpu_workers_ : nodes_[node].device->concurrent_kernels();
}

double PlacementPolicy::backlog_seconds(int node) const {
  const std::int64_t ns = node == 0 ? cpu_backlog_ns_.load(std::memory_order_relaxed)
                                    : nodes_[node].worker->backlog_ns();
  return static_cast<double>(ns > 0 ? ns : 0) * 1e-9 / lanes(node);
}

// Tasks waiting or running per lane.
double PlacementPolicy::queued_tasks_per_lane(int node) const {
  const std::int64_t tasks =
      node == 0 ? cpu_tasks_.load(std::memory_order_relaxed) : nodes_[node].worker->queued_tasks();
  return static_cast<double>(tasks) / lanes(node);
}

int PlacementPolicy::explore(Task& task, bool devices_only) {
  task.explored = false;
  if (task.placement != Placement::automatic && !devices_only) return -1;
  // The least explored uncalibrated candidate (the CPU workers first of equals), so that every
  // device kind gets its samples even when a type has few tasks.
  int explore = -1;
  int least_explored = PerfModel::calibration_samples;
  for (int node = 0; node < static_cast<int>(nodes_.size()); ++node) {
    if (!can_run(task, node) || (devices_only && node == 0)) continue;
    const int n = model_.explorations(task.type_name, nodes_[node].kind);
    if (n < least_explored && !(node == 0 && n > 0 && cpu_far_slower(task))) {
      explore = node;
      least_explored = n;
    }
  }
  if (explore < 0 || !model_.claim_exploration(task.type_name, nodes_[explore].kind)) return -1;
  task.explored = true;
  task.expected_ns = 0;
  return explore;
}

bool PlacementPolicy::cpu_far_slower(const Task& task) {
  for (int node = 1; node < static_cast<int>(nodes_.size()); ++node)
    if (can_run(task, node) &&
        model_.settle_if_far_slower(task.type_name, DeviceKind::cpu, nodes_[node].kind))
      return true;
  return false;
}

int PlacementPolicy::choose(Task& task) {
  const int count = static_cast<int>(nodes_.size());
  bool device_possible = false;
  for (int node = 1; node < count; ++node) device_possible |= can_run(task, node);
  const bool devices_only = task.placement == Placement::gpu_only ||
                            (task.placement == Placement::prefer_gpu && device_possible);
  const std::size_t bytes = task.work_size;  // the model's size key
  std::vector<double> seconds(count, std::numeric_limits<double>::infinity());
  int candidates = 0;  // nodes it may run on
  int choices = 0;     // of those, nodes with an estimate
  bool calibrated = true;
  int best = -1;
  double best_finish = std::numeric_limits<double>::infinity();
  double best_execution = 0;
  // The CPU's slowest likely time and the devices' fastest: transfers plus the quartiles of
  // the model's runs.
  double cpu_high = std::numeric_limits<double>::infinity();
  double devices_low = std::numeric_limits<double>::infinity();
  // A task not pooled while a candidate is uncalibrated (one held to the devices, or with one
  // candidate) goes to the calibrated candidate where it finishes first, or else to the one
  // with the fewest queued tasks per lane.
  int fallback = -1;
  double fallback_load = std::numeric_limits<double>::infinity();
  if (const int node = explore(task, devices_only); node >= 0) return node;
  for (int node = 0; node < count; ++node) {
    if (!can_run(task, node) || (devices_only && node == 0)) continue;
    const double backlog = backlog_seconds(node);
    if (task.placement != Placement::automatic && !devices_only) {
      best = node;  // cpu_only, or prefer_gpu without a device implementation
      break;
    }
    ++candidates;
    if (const double load = queued_tasks_per_lane(node); load < fallback_load) {
      fallback = node;
      fallback_load = load;
    }
    const std::optional<PerfModel::Spread> execution =
        model_.estimate_spread(task.type_name, nodes_[node].kind, bytes);
    if (!execution) {  // being explored
      calibrated = false;
      continue;
    }
    const double transfer = *transfer_seconds(task, node);
    seconds[node] = transfer + execution->seconds;
    if (node == 0)
      cpu_high = transfer + execution->high;
    else
      devices_low = std::min(devices_low, transfer + execution->low);
    ++choices;
    const double finish = backlog + seconds[node];
    if (finish < best_finish) {
      best = node;
      best_finish = finish;
      best_execution = execution->seconds;
    }
  }
  if (task.placement == Placement::automatic && calibrated && choices > 1) {
    add_to_pool(task, std::move(seconds), cpu_high < devices_low, bytes, false);
    return pooled;
  }
  if (task.placement == Placement::automatic && !calibrated && candidates > 1) {
    provisional_seconds(task, bytes, seconds);
    add_to_pool(task, std::move(seconds), false, bytes, true);
    return pooled;
  }
  if (best < 0) best = fallback;
  task.expected_ns = static_cast<std::int64_t>(best_execution * 1e9);
  return best;
}

// A task whose type is still being explored waits in the pool rather than being dealt at once
// by queue length, as it was: a burst of ready tasks placed before any run of their type had
// ended went mostly to the idle CPU workers, which on a GPU machine take up to thousands of
// times as long as the GPU for a tile kernel (seconds each). Its group's times are the model's
// runs so far, looked up again at each pull: a node that has run none is a device the group
// goes to first, or the CPU workers, which take none until they have run one. So a device
// starts on the burst at once, and the CPU workers join in where their first runs say they
// help, as they do once calibrated.
void PlacementPolicy::provisional_seconds(const Task& task, std::size_t bytes,
                                          std::vector<double>& seconds) {
  for (std::size_t node = 0; node < nodes_.size(); ++node) {
    if (!can_run(task, static_cast<int>(node))) {
      seconds[node] = never;
      continue;
    }
    const std::optional<PerfModel::Spread> execution =
        model_.estimate_spread(task.type_name, nodes_[node].kind, bytes, true);
    seconds[node] = execution ? execution->seconds : node == 0 ? never : unmeasured_device_seconds;
  }
}

void PlacementPolicy::add_to_pool(Task& task, std::vector<double> seconds, bool cpu_surely_faster,
                                  std::size_t bytes, bool provisional) {
  MutexLock guard(pool_mutex_);
  Group* group = nullptr;
  for (Group& g : pool_)
    if (g.type_name == task.type_name && g.bytes == bytes) group = &g;
  if (!group) group = &pool_.emplace_back(Group{task.type_name, bytes, {}, false, false, {}});
  group->seconds = std::move(seconds);  // the latest estimates
  group->cpu_surely_faster = cpu_surely_faster;
  group->provisional = provisional;
  group->tasks.emplace_back(&task, pooled_total_++);
  std::push_heap(group->tasks.begin(), group->tasks.end(), runs_later);
  pooled_count_.fetch_add(1, std::memory_order_relaxed);
}

// The CPU workers are a group's fastest node only when surely faster: else its fastest device
// is, and takes the tasks they leave.
int PlacementPolicy::fastest(const Group& g) {
  const auto first = g.seconds.begin() + (g.cpu_surely_faster ? 0 : 1);
  return static_cast<int>(std::min_element(first, g.seconds.end()) - g.seconds.begin());
}

int PlacementPolicy::urgency(const Group& g) { return g.tasks.front().first->priority; }

void PlacementPolicy::project_loads() {
  for (Group& g : pool_)
    if (g.provisional && !g.tasks.empty())
      provisional_seconds(*g.tasks.front().first, g.bytes, g.seconds);
  pooled_work_.clear();
  for (const Group& g : pool_) {
    if (g.tasks.empty()) continue;
    const int best = fastest(g);
    pooled_work_.push_back(
        {urgency(g), best, static_cast<double>(g.tasks.size()) * g.seconds[best] / lanes(best)});
  }
  std::sort(pooled_work_.begin(), pooled_work_.end(),
            [](const PooledWork& a, const PooledWork& b) { return a.priority > b.priority; });
  for (std::size_t n = 0; n < nodes_.size(); ++n)
    projected_[n] = backlog_seconds(static_cast<int>(n));
  level_priorities_.clear();
  level_loads_.clear();
  for (std::size_t i = 0; i < pooled_work_.size();) {
    const int priority = pooled_work_[i].priority;
    for (; i < pooled_work_.size() && pooled_work_[i].priority == priority; ++i)
      projected_[pooled_work_[i].node] += pooled_work_[i].seconds;
    level_priorities_.push_back(priority);
    level_loads_.insert(level_loads_.end(), projected_.begin(), projected_.end());
  }
}

double PlacementPolicy::load_ahead_of(int node, int priority) const {
  const auto level = std::partition_point(level_priorities_.begin(), level_priorities_.end(),
                                          [priority](int p) { return p > priority; });
  return level_loads_[static_cast<std::size_t>(level - level_priorities_.begin()) * nodes_.size() +
                      static_cast<std::size_t>(node)];
}

// The node that runs a group's tasks fastest always takes them (so no task waits for a device
// that is not coming). Another node takes them only if it would finish one no later than the
// fastest node would: each node's projected load is its backlog plus the pooled work it is
// fastest at that runs before the group's most urgent task (that of the same or a higher
// priority), shared among its lanes (CPU workers, or a device's concurrent kernels). Of the
// groups a node may take, it takes the most urgent, and of equally urgent ones the one it is
// relatively best at (lowest ratio of its time to the best other node's): so a GPU that is
// fastest at everything runs the critical path first, as StarPU's dmdas does, rather than the
// kernels it gains most on, and the CPU workers do not take a critical task from a GPU whose
// pooled work is mostly less urgent.
//
// Unless they run a group's tasks faster than any device beyond the noise of the runs, the CPU
// workers take none that changes data only a device holds (a write or commute whose host
// replica is stale): its data would cross the host link home and, for the device's next task
// on it, back again, bytes that time alone barely weighs (a 512 KiB tile crosses a 12 GB/s
// link in 44 us, against milliseconds for the tile's kernel on a core). A device takes it: the
// fastest node, or one that finishes it as early as the CPU workers would.
PlacementPolicy::Choice PlacementPolicy::group_for(int node, bool resident_only) {
  project_loads();
  // The groups `node` may take, most preferred first.
  candidates_.clear();
  for (Group& g : pool_) {
    if (g.tasks.empty() || !(g.seconds[node] < never)) continue;
    const int priority = urgency(g);
    const int best = fastest(g);
    double best_other = never;
    for (std::size_t m = 0; m < g.seconds.size(); ++m)
      if (static_cast<int>(m) != node) best_other = std::min(best_other, g.seconds[m]);
    const double affinity = g.seconds[node] / best_other;
    if (affinity > 1 && load_ahead_of(node, priority) + g.seconds[node] >
                            load_ahead_of(best, priority) + g.seconds[best])
      continue;
    candidates_.push_back({&g, priority, affinity});
  }
  std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
    return a.priority != b.priority ? a.priority > b.priority : a.affinity < b.affinity;
  });
  std::size_t looked_over = 0;
  for (const Candidate& candidate : candidates_) {
    const Group& g = *candidate.group;
    // Which task, only where it decides whether the group is taken at all.
    const bool host_data_only = node == 0 && !g.cpu_surely_faster;
    std::size_t task = Choice::any_task;
    if (resident_only) {
      if (looked_over >= looked_over_at_most) break;
      task = resident_task(g, node, looked_over);
    } else if (host_data_only) {
      task = nearest_task(g, node, true);
    }
    if (task == g.tasks.size()) continue;
    return {candidate.group, task};
  }
  return {};
}

// The most urgent of the group's tasks whose data is all on `node` (g.tasks.size() if none),
// among the first entries of its heap: one pull looks over looked_over_at_most tasks in all,
// `looked_over` counting them across groups. On its data means no copy to make or wait for
// (DataMover::resident), not a modelled transfer of zero seconds: a link may be modelled as free
// (the tests' emulated devices), and a device whose copy slots were taken then took every pooled
// task as one on its data, copies and all, leaving none to the CPU workers.
std::size_t PlacementPolicy::resident_task(const Group& g, int node,
                                           std::size_t& looked_over) const {
  std::size_t found = g.tasks.size();
  for (std::size_t i = 0; i < g.tasks.size() && looked_over < looked_over_at_most; ++i) {
    ++looked_over;
    if (found < g.tasks.size() && !runs_later(g.tasks[found], g.tasks[i])) continue;
    if (DataMover::resident(*g.tasks[i].first, node)) found = i;
  }
  return found;
}

// Among the group's most urgent tasks, the one whose inputs are cheapest to bring to `node`:
// most of them already valid there, or on a device it has a peer link to. A device then goes on
// with the tiles it holds and the CPU workers with those in host memory, rather than the oldest
// task dragging its inputs across a host link. Only tasks of the top priority compete, so the
// critical path keeps its order, and only those near the top of the heap, so that a pull costs
// the same whatever the pool holds. Ties go to the task nearest the top.
std::size_t PlacementPolicy::nearest_task(const Group& g, int node, bool host_data_only) const {
  constexpr std::size_t window = 32;
  const int top_priority = g.tasks.front().first->priority;
  std::size_t nearest = g.tasks.size();
  double nearest_seconds = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < std::min(window, g.tasks.size()); ++i) {
    const Task& task = *g.tasks[i].first;
    if (task.priority != top_priority) continue;
    const std::optional<double> transfer = transfer_seconds(task, node, host_data_only);
    if (!transfer) continue;
    const double seconds = *transfer;
    if (nearest == g.tasks.size() || seconds < nearest_seconds) {
      nearest = i;
      nearest_seconds = seconds;
      if (seconds == 0) break;
    }
  }
  return nearest;
}

bool PlacementPolicy::would_pull(int node) {
  if (!has_pooled()) return false;
  MutexLock guard(pool_mutex_);
  return group_for(node).group != nullptr;
}

Task* PlacementPolicy::pull(int node, bool resident_only) {
  if (!has_pooled()) return nullptr;
  MutexLock guard(pool_mutex_);
  // A look that found none on the device's data holds until a task is pooled: their data comes
  // there by the device's own copies, whose landing leaves it room to pull any task. (A task
  // that writes data being copied to another node counts once that copy lands, which may come
  // first: it then waits for the device's copies, never longer.)
  if (resident_only && resident_miss_[node] == pooled_total_) return nullptr;
  const Choice choice = group_for(node, resident_only);
  Group* chosen = choice.group;
  if (!chosen) {
    if (resident_only) resident_miss_[node] = pooled_total_;
    return nullptr;
  }
  const std::size_t index =
      choice.task == Choice::any_task ? nearest_task(*chosen, node, false) : choice.task;
  Task* task = take_from_heap(chosen->tasks, index).first;
  pooled_count_.fetch_sub(1, std::memory_order_relaxed);
  task->explored = false;
  task->expected_ns = static_cast<std::int64_t>(chosen->seconds[node] * 1e9);
  return task;
}

}  // namespace versa::detail
