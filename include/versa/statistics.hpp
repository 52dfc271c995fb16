#pragma once

#include <cstdint>
#include <string>

namespace versa {

// What happened on one device since the runtime started (Runtime::statistics()). Entry 0 is
// the CPU workers with host memory; then one entry per accelerator.
struct DeviceStatistics {
  std::string name;                    // "cpu", "cuda:0 (...)", "emulated:1"
  std::uint64_t tasks = 0;             // tasks run there (counted when accelerators are present)
  std::uint64_t bytes_to_device = 0;   // copied host -> this device
  std::uint64_t bytes_to_host = 0;     // copied this device -> host (fetches and write-backs)
  std::uint64_t bytes_from_peers = 0;  // copied into this device from another over a peer link
  std::uint64_t bytes_zeroed = 0;      // made here by filling zeros, not copied (declare_zero)
  std::uint64_t evictions = 0;         // replicas dropped to make room
  double transfer_seconds = 0;         // time its copies took, summed (as the device measured it)
  double kernel_seconds = 0;           // time its task implementations took, summed
};

// What the tasks of one task type did on one device kind (Runtime::task_statistics()), when
// Config::task_statistics (or print_statistics, VERSA_STATS=1) is on. One-off tasks count under
// their name. Kernel times are the bodies' run times as the device measured them (on the CPU,
// the body's wall time); tasks that failed or were cancelled are not counted.
struct TaskStatistics {
  std::string task_type;      // the task type's name
  std::string device_kind;    // "cpu", "cuda", "emulated", ...
  std::uint64_t tasks = 0;    // tasks run
  double kernel_seconds = 0;  // their kernel times, summed
  double median_kernel_seconds = 0;
  std::uint64_t bytes_moved = 0;  // bytes copied to where they ran for their inputs
};

}  // namespace versa
