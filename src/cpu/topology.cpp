#include "cpu/topology.hpp"

#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

#if VERSA_HAVE_HWLOC
#include <hwloc.h>
#else
#include <pthread.h>
#include <sched.h>
#endif

namespace versa::detail {

// The OS's figure, not hwloc's: hwloc's root object reported one NUMA node's memory on some
// machines (5 GiB of 24).
unsigned long long host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<unsigned long long>(pages) * static_cast<unsigned long long>(page_size);
}

std::string format_memory(unsigned long long bytes) {
  constexpr unsigned long long mib = 1ull << 20, gib = 1ull << 30;
  const unsigned long long mibs = (bytes + mib / 2) / mib;
  if (mibs < 1024) return std::to_string(mibs) + " MiB";
  return std::to_string((bytes + gib / 2) / gib) + " GiB";
}

#if VERSA_HAVE_HWLOC

struct Topology::Hwloc {
  hwloc_topology_t topology = nullptr;
  // The cores (or PUs, where hwloc finds no cores) that the process may run on: those its
  // binding (a launcher's, such as mpirun's per rank, or taskset's) covers, all when unbound.
  std::vector<hwloc_obj_t> pin_targets;
  ~Hwloc() {
    if (topology) hwloc_topology_destroy(topology);
  }
};

Topology::Topology() : hwloc_(std::make_unique<Hwloc>()), memory_bytes_(host_memory_bytes()) {
  const int fallback = std::max(1u, std::thread::hardware_concurrency());
  if (hwloc_topology_init(&hwloc_->topology) != 0 || hwloc_topology_load(hwloc_->topology) != 0) {
    if (hwloc_->topology) hwloc_topology_destroy(hwloc_->topology);
    hwloc_->topology = nullptr;
    cores_ = processing_units_ = fallback;
    return;
  }
  const int cores = hwloc_get_nbobjs_by_type(hwloc_->topology, HWLOC_OBJ_CORE);
  const int pus = hwloc_get_nbobjs_by_type(hwloc_->topology, HWLOC_OBJ_PU);
  processing_units_ = pus > 0 ? pus : fallback;
  cores_ = cores > 0 ? cores : processing_units_;
  const hwloc_obj_type_t type = cores > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  hwloc_bitmap_t bound = hwloc_bitmap_alloc();
  const bool known =
      bound && hwloc_get_cpubind(hwloc_->topology, bound, HWLOC_CPUBIND_PROCESS) == 0;
  for (int i = 0; i < hwloc_get_nbobjs_by_type(hwloc_->topology, type); ++i) {
    hwloc_obj_t object = hwloc_get_obj_by_type(hwloc_->topology, type, i);
    if (object && object->cpuset && (!known || hwloc_bitmap_intersects(object->cpuset, bound)))
      hwloc_->pin_targets.push_back(object);
  }
  hwloc_bitmap_free(bound);
}

Topology::~Topology() = default;

int Topology::usable_cores() const {
  return hwloc_->topology ? std::max<int>(1, static_cast<int>(hwloc_->pin_targets.size())) : cores_;
}

// Within the process's binding: two ranks bound to different cores must not both pin their
// first worker to core 0.
bool Topology::pin_current_thread(int index) const {
  const std::vector<hwloc_obj_t>& targets = hwloc_->pin_targets;
  if (!hwloc_->topology || targets.empty()) return false;
  const hwloc_obj_t core = targets[static_cast<std::size_t>(index) % targets.size()];
  return hwloc_set_cpubind(hwloc_->topology, core->cpuset, HWLOC_CPUBIND_THREAD) == 0;
}

#else
// Without hwloc: every hardware thread counts as a core, and pinning binds to one of them.
struct Topology::Hwloc {};

Topology::Topology() : hwloc_(std::make_unique<Hwloc>()), memory_bytes_(host_memory_bytes()) {
  cores_ = processing_units_ = std::max(1u, std::thread::hardware_concurrency());
}

Topology::~Topology() = default;

int Topology::usable_cores() const { return processing_units_; }

bool Topology::pin_current_thread(int index) const {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(index % processing_units_, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}
#endif

std::string Topology::summary() const {
  std::string text =
      std::to_string(cores_) + " cores, " + std::to_string(processing_units_) + " PUs";
  if (memory_bytes_ > 0) text += ", " + format_memory(memory_bytes_);
#if !VERSA_HAVE_HWLOC
  text += " (no hwloc: hardware threads as cores)";
#endif
  return text;
}

}  // namespace versa::detail
