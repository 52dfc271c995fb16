// The emulated accelerator as a device kind: Config::emulated_devices says how many and how.
#include "device/device_registry.hpp"
#include "emulated/emulated_device.hpp"

namespace versa::detail {

DeviceBackend emulated_device_kind() {
  return {"emulated", ImplementationSlot::emulated,
          [](const Config& config, std::vector<std::unique_ptr<Device>>& devices) {
            std::string summary;
            for (std::size_t i = 0; i < config.emulated_devices.size(); ++i) {
              auto device = std::make_unique<EmulatedDevice>(
                  static_cast<int>(i), config.emulated_devices[i], config.device_memory_limit);
              summary += (summary.empty() ? "" : ", ") + device->name() + " (" +
                         std::to_string(device->memory_capacity() >> 20) + " MiB, " +
                         std::to_string(static_cast<int>(device->bandwidth() / 1e9)) + " GB/s)";
              devices.push_back(std::move(device));
            }
            return "emulated devices: " + (summary.empty() ? std::string("none") : summary);
          }};
}

}  // namespace versa::detail
