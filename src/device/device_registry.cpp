#include "device/device_registry.hpp"

#include <deque>
#include <stdexcept>

#include "base/assert.hpp"
#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

namespace {

struct Registry {
  // Registers the built-in kinds in the order of DeviceKind's fixed values: one line per kind.
  // Without the lock: no other thread sees the registry before it is constructed.
  Registry();

  Mutex mutex;
  std::deque<DeviceBackend> kinds VERSA_GUARDED_BY(mutex);  // index = DeviceKind value
};

DeviceKind add(Registry& registry, DeviceBackend backend) VERSA_REQUIRES(registry.mutex) {
  for (const DeviceBackend& kind : registry.kinds)
    if (kind.name == backend.name)
      throw std::invalid_argument("device kind '" + backend.name + "' is registered already");
  if (registry.kinds.size() > 255) throw std::invalid_argument("too many device kinds");
  registry.kinds.push_back(std::move(backend));
  return static_cast<DeviceKind>(registry.kinds.size() - 1);
}

Registry::Registry() {
  const DeviceKind cpu = add(*this, {"cpu", ImplementationSlot::cpu, nullptr});
  const DeviceKind cuda = add(*this, cuda_device_kind());
  const DeviceKind emulated = add(*this, emulated_device_kind());
  VERSA_ASSERT(
      cpu == DeviceKind::cpu && cuda == DeviceKind::cuda && emulated == DeviceKind::emulated,
      "the built-in kinds register in the order of their values");
  (void)cpu, (void)cuda, (void)emulated;
}

// The registry, created with the built-in kinds on first use.
Registry& registry() {
  // Never destroyed: kinds may be looked up during static teardown.
  static Registry* const instance = new Registry;
  return *instance;
}

}  // namespace

DeviceKind register_device_kind(DeviceBackend backend) {
  Registry& r = registry();
  MutexLock guard(r.mutex);
  return add(r, std::move(backend));
}

std::vector<DeviceBackend> device_kinds() {
  Registry& r = registry();
  MutexLock guard(r.mutex);
  return {r.kinds.begin(), r.kinds.end()};
}

std::string device_kind_name(DeviceKind kind) {
  Registry& r = registry();
  MutexLock guard(r.mutex);
  const auto index = static_cast<std::size_t>(kind);
  return index < r.kinds.size() ? r.kinds[index].name : "unknown";
}

bool find_device_kind(const std::string& name, DeviceKind& kind) {
  Registry& r = registry();
  MutexLock guard(r.mutex);
  for (std::size_t i = 0; i < r.kinds.size(); ++i)
    if (r.kinds[i].name == name) {
      kind = static_cast<DeviceKind>(i);
      return true;
    }
  return false;
}

}  // namespace versa::detail
