// The machine's cores as hwloc reports them, and pinning of the calling thread to one of them.
#pragma once

#include <memory>
#include <string>

namespace versa::detail {

class Topology {
 public:
  Topology();  // loads the topology; falls back to std::thread::hardware_concurrency on failure
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  int cores() const { return cores_; }
  int processing_units() const { return processing_units_; }

  // Binds the calling thread to core `index % cores()`. Returns false (and leaves the thread
  // unbound) when the system refuses, e.g. in a restricted container.
  bool pin_current_thread(int index) const;

  // "2 cores, 4 PUs, 16 GiB" style summary.
  std::string summary() const;

 private:
  struct Hwloc;
  std::unique_ptr<Hwloc> hwloc_;
  int cores_ = 1;
  int processing_units_ = 1;
  unsigned long long memory_bytes_ = 0;  // host memory, when hwloc reports it
};

}  // namespace versa::detail
