#include "device/device_registry.hpp"

#include <deque>
#include <mutex>
#include <stdexcept>

#include "base/assert.hpp"

namespace versa::detail {

namespace {

struct Registry {
  std::mutex mutex;
  std::deque<DeviceBackend> kinds;  // guarded by mutex; index = DeviceKind value
};

DeviceKind add(Registry& registry, DeviceBackend backend) {
  for (const DeviceBackend& kind : registry.kinds)
    if (kind.name == backend.name)
      throw std::invalid_argument("device kind '" + backend.name + "' is registered already");
  if (registry.kinds.size() > 255) throw std::invalid_argument("too many device kinds");
  registry.kinds.push_back(std::move(backend));
  return static_cast<DeviceKind>(registry.kinds.size() - 1);
}

// The registry with the built-in kinds, registered on first use in the order of DeviceKind's
// fixed values: one line per kind.
Registry& registry() {
  static Registry* const instance = [] {
    auto* r = new Registry;  // never destroyed: kinds may be looked up during static teardown
    const DeviceKind cpu = add(*r, {"cpu", ImplementationSlot::cpu, nullptr});
    const DeviceKind cuda = add(*r, cuda_device_kind());
    const DeviceKind emulated = add(*r, emulated_device_kind());
    VERSA_ASSERT(
        cpu == DeviceKind::cpu && cuda == DeviceKind::cuda && emulated == DeviceKind::emulated,
        "the built-in kinds register in the order of their values");
    (void)cpu, (void)cuda, (void)emulated;
    return r;
  }();
  return *instance;
}

}  // namespace

DeviceKind register_device_kind(DeviceBackend backend) {
  Registry& r = registry();
  std::lock_guard<std::mutex> guard(r.mutex);
  return add(r, std::move(backend));
}

std::vector<DeviceBackend> device_kinds() {
  Registry& r = registry();
  std::lock_guard<std::mutex> guard(r.mutex);
  return {r.kinds.begin(), r.kinds.end()};
}

std::string device_kind_name(DeviceKind kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> guard(r.mutex);
  const auto index = static_cast<std::size_t>(kind);
  return index < r.kinds.size() ? r.kinds[index].name : "unknown";
}

bool find_device_kind(const std::string& name, DeviceKind& kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> guard(r.mutex);
  for (std::size_t i = 0; i < r.kinds.size(); ++i)
    if (r.kinds[i].name == name) {
      kind = static_cast<DeviceKind>(i);
      return true;
    }
  return false;
}

}  // namespace versa::detail
