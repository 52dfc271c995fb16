#include "versa/runtime.hpp"

#include <stdexcept>

#include "core/runtime_core.hpp"

namespace versa {

// Workers start inside RuntimeCore's constructor and call its virtual functions at once, so it
// must be the complete object, not the base of one still under construction.
struct Runtime::Impl {
  explicit Impl(Config config)
      : core(std::move(config)), copy_home_name(core.intern_name("copy home")) {}
  detail::RuntimeCore core;
  const char* copy_home_name;  // the name of copy_home's tasks
};

Runtime::Runtime() : Runtime(Config{}) {}

Runtime::Runtime(Config config)
    : Runtime(Config::from_environment(std::move(config)), EnvironmentApplied{}) {}

Runtime::Runtime(Config config, EnvironmentApplied)
    : impl_(std::make_unique<Impl>(std::move(config))) {}

Runtime::~Runtime() = default;

int Runtime::cpu_workers() const { return impl_->core.cpu_workers(); }

int Runtime::device_count() const { return impl_->core.nodes() - 1; }

int Runtime::gpu_count() const { return impl_->core.gpus(); }

std::vector<DeviceStatistics> Runtime::statistics() const { return impl_->core.statistics(); }

std::vector<TaskStatistics> Runtime::task_statistics() const {
  return impl_->core.task_statistics();
}

const std::string& Runtime::topology_summary() const { return impl_->core.summary(); }

std::string Runtime::describe_pending() const { return impl_->core.describe_pending(); }

std::size_t Runtime::task_memory_bytes() const { return impl_->core.task_memory_bytes(); }

std::size_t Runtime::reduction_memory_bytes() const { return impl_->core.reduction_memory_bytes(); }
std::size_t Runtime::rename_memory_bytes() const { return impl_->core.rename_memory_bytes(); }
std::uint64_t Runtime::renamed_accesses() const { return impl_->core.renamed_accesses(); }

Token Runtime::token(std::string name) {
  return Token(impl_->core.create_handle(nullptr, detail::Layout{0, 0, 0}, std::move(name)));
}

PinnedHostMemory Runtime::pin_host_memory(void* data, std::size_t bytes) {
  const std::shared_ptr<detail::HostPins>& pins = impl_->core.host_pins();
  return pins && pins->pin(data, bytes) ? PinnedHostMemory(pins, data) : PinnedHostMemory();
}

void detail::unpin(HostPins& pins, const void* data) { pins.unpin(data); }

void Runtime::sync() { impl_->core.sync(); }

std::size_t Runtime::surplus_tasks() const { return impl_->core.surplus_tasks(); }

void Runtime::copy_home(const HandleBase& handle) {
  detail::HandleState* state = detail::state_of(handle);
  if (state == nullptr) throw std::invalid_argument("versa: copy_home of an empty handle");
  copy_home(state);
}

void Runtime::copy_home(detail::HandleState* state) {
  struct NoClosure {};
  NoClosure closure;
  detail::AccessRecord access;
  access.handle = state;
  access.mode = AccessMode::read;
  detail::TaskDesc desc{};
  desc.name = desc.type_name = impl_->copy_home_name;
  desc.accesses = &access;
  desc.access_count = 1;
  desc.invoke = [](void*, const detail::AccessRecord*) {};
  desc.placement = Placement::cpu_only;
  desc.closure = &closure;
  desc.closure_size = sizeof closure;
  desc.closure_align = alignof(NoClosure);
  desc.move = [](void*, void*) {};
  desc.work = -1;
  impl_->core.submit(desc);
}

void Runtime::wait_all() { impl_->core.wait_all(); }

detail::HandleState* Runtime::create_handle(const void* data, detail::Layout layout,
                                            std::string name) {
  return impl_->core.create_handle(data, layout, std::move(name));
}

detail::HandleState* Runtime::create_scratch(detail::Layout layout, std::string name) {
  return impl_->core.create_scratch(layout, std::move(name));
}

std::size_t Runtime::scratch_memory_bytes() const { return impl_->core.scratch_memory_bytes(); }

void Runtime::submit_task(const detail::TaskDesc& desc) { impl_->core.submit(desc); }
detail::StartedChild Runtime::start_child(std::string_view name, detail::InvokeFn invoke,
                                          detail::DestroyFn destroy) {
  return impl_->core.start_child(name, invoke, destroy);
}
void Runtime::submit_child(detail::Task* task) { impl_->core.submit_child(task); }

const char* Runtime::intern_name(std::string_view name) { return impl_->core.intern_name(name); }

bool Runtime::keeps(const detail::TaskTypeBase& type) const { return impl_->core.keeps(type); }

void Runtime::keep_type(const std::shared_ptr<const detail::TaskTypeBase>& type) {
  impl_->core.keep_alive(type);
}

void Runtime::refuse_waiting_on_own_views() { impl_->core.refuse_waiting_on_own_views(false); }

void* Runtime::acquire_host(detail::AccessRecord& record) {
  return impl_->core.acquire_host(record);
}

void Runtime::release_host(void* ticket) noexcept {
  impl_->core.release_host(static_cast<detail::Task*>(ticket));
}

}  // namespace versa
