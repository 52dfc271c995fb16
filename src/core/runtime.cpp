#include "versa/runtime.hpp"

#include "core/runtime_core.hpp"

namespace versa {

struct Runtime::Impl : detail::RuntimeCore {
  using RuntimeCore::RuntimeCore;
};

Runtime::Runtime() : Runtime(Config{}) {}

Runtime::Runtime(Config config)
    : impl_(std::make_unique<Impl>(Config::from_environment(std::move(config)))) {}

Runtime::~Runtime() = default;

int Runtime::cpu_workers() const { return impl_->cpu_workers(); }

Token Runtime::token(std::string name) {
  return Token(impl_->create_handle(nullptr, detail::Layout{0, 0, 0}, std::move(name)));
}

void Runtime::sync() { impl_->sync(); }

void Runtime::wait_all() { impl_->wait_all(); }

detail::HandleState* Runtime::create_handle(const void* data, detail::Layout layout,
                                            std::string name) {
  return impl_->create_handle(data, layout, std::move(name));
}

void Runtime::submit_task(const detail::TaskDesc& desc) { impl_->submit(desc); }

const char* Runtime::intern_name(std::string_view name) { return impl_->intern_name(name); }

void Runtime::keep_alive(const std::shared_ptr<detail::TaskTypeBase>& type) {
  impl_->keep_alive(type);
}

void* Runtime::acquire_host(detail::AccessRecord& record) { return impl_->acquire_host(record); }

void Runtime::release_host(void* ticket) noexcept {
  impl_->release_host(static_cast<detail::Task*>(ticket));
}

}  // namespace versa
