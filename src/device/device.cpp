#include "device/device.hpp"

namespace versa::detail {

const char* to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::cpu:
      return "cpu";
    case DeviceKind::cuda:
      return "cuda";
    case DeviceKind::emulated:
      return "emulated";
  }
  return "unknown";
}

}  // namespace versa::detail
