#pragma once

#include <cstdint>
#include <string>

namespace versa {

// What happened on one device since the runtime started (Runtime::statistics()). Entry 0 is
// the CPU workers with host memory; then one entry per accelerator.
struct DeviceStatistics {
  std::string name;                   // "cpu", "cuda:0 (...)", "emulated:1"
  std::uint64_t tasks = 0;            // tasks run there (counted when accelerators are present)
  std::uint64_t bytes_to_device = 0;  // copied host -> this device
  std::uint64_t bytes_to_host = 0;    // copied this device -> host (fetches and write-backs)
  std::uint64_t evictions = 0;        // replicas dropped to make room
  double transfer_seconds = 0;        // time its copies took, summed (as the device measured it)
  double kernel_seconds = 0;          // time its task implementations took, summed
};

}  // namespace versa
