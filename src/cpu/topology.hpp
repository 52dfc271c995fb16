// The machine's cores as hwloc reports them, pinning of the calling thread to one of them, and
// the host's memory as the operating system reports it.
#pragma once

#include <memory>
#include <string>

namespace versa::detail {

// The host's physical memory as the OS reports it (sysconf), or 0 when it does not.
unsigned long long host_memory_bytes();
// A memory size for the start-up line: whole GiB, rounded to the nearest, or whole MiB under
// 1 GiB ("24 GiB", "512 MiB").
std::string format_memory(unsigned long long bytes);

class Topology {
 public:
  Topology();  // loads the topology; falls back to std::thread::hardware_concurrency on failure
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  int cores() const { return cores_; }
  int processing_units() const { return processing_units_; }
  // The cores the process may run on (pin_current_thread's targets): those its binding covers,
  // all of them when it is not bound.
  int usable_cores() const;

  // Binds the calling thread to the `index`-th core, round robin over the cores the process is
  // bound to (all of them when it is not bound). Returns false (and leaves the thread unbound)
  // when the system refuses, e.g. in a restricted container.
  bool pin_current_thread(int index) const;

  // The host's physical memory (host_memory_bytes()), 0 if unknown.
  unsigned long long memory_bytes() const { return memory_bytes_; }

  // "2 cores, 4 PUs, 16 GiB" style summary.
  std::string summary() const;

 private:
  struct Hwloc;
  std::unique_ptr<Hwloc> hwloc_;
  int cores_ = 1;
  int processing_units_ = 1;
  unsigned long long memory_bytes_ = 0;
};

}  // namespace versa::detail
