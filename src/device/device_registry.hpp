// The registry of device kinds: what the runtime knows of each kind of accelerator — its name,
// which implementation of a task runs on it, and how its devices are opened. Core, placement
// and the reductions read it and hold no switch on kinds, so adding a kind touches only
// src/<kind>/ and its line in device_registry.cpp (or, for a kind outside the library, one
// call to register_device_kind before the first Runtime is made).
//
// The registry is written only while kinds register (the built-in ones on first use) and read
// after; lookups take a lock, so the runtime reads what it needs once, when it starts.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/task.hpp"
#include "device/device.hpp"
#include "versa/config.hpp"

namespace versa::detail {

struct DeviceBackend {
  std::string name;  // "cuda", "emulated": messages, the performance model's file
  // The implementation of a task that runs on this kind's devices.
  ImplementationSlot slot = ImplementationSlot::cpu;
  // Opens the devices of this kind that `config` asks for, appending them to `devices`, and
  // returns what the start-up line says of them ("GPUs: 1 GPU: ..."). Throws
  // std::invalid_argument for a configuration it cannot serve.
  std::function<std::string(const Config& config, std::vector<std::unique_ptr<Device>>& devices)>
      open;
};

// Registers a kind and returns its value. Throws std::invalid_argument when the name is taken.
DeviceKind register_device_kind(DeviceBackend backend);
// The registered kinds, the CPU first, in order of registration (values 0, 1, ...).
std::vector<DeviceBackend> device_kinds();
// The name of a registered kind.
std::string device_kind_name(DeviceKind kind);
// The kind registered as `name`, or false.
bool find_device_kind(const std::string& name, DeviceKind& kind);

// The built-in kinds, defined in their folders.
DeviceBackend cuda_device_kind();      // src/cuda (a stand-in that opens nothing without CUDA)
DeviceBackend emulated_device_kind();  // src/emulated

}  // namespace versa::detail
