#include "data/write_renaming.hpp"

#include <cstring>
#include <memory>

namespace versa::detail {

Registration WriteRenaming::register_overwrite(HandleState& root, AccessMode mode) {
  const std::size_t bytes = root.layout()->bytes();
  // Tokens only order their tasks (a token's write_only waits as a write does).
  if (!enabled_ || bytes == 0 || !root.worth_renaming() || !buffers_.try_reserve(bytes))
    return root.register_access(mode);
  auto fresh = std::make_unique<HandleState>(root, buffers_.take(bytes), &buffers_);
  Registration registration = root.register_renamed(std::move(fresh), mode);
  if (registration.first_rename) buffers_.list(&root);
  renamed_.fetch_add(1, std::memory_order_relaxed);
  return registration;
}

void WriteRenaming::copy_home(HandleState& instance, std::uint64_t instance_required,
                              HandleState& root, std::uint64_t root_required) {
  const Layout& from = *instance.layout();  // packed
  const Layout& to = *root.layout();
  const auto* source = static_cast<const std::byte*>(instance.data());
  auto* destination = static_cast<std::byte*>(root.data());
  const std::size_t column = to.rows * to.element_size;
  for (std::size_t c = 0; c < to.cols; ++c)
    std::memcpy(destination + c * to.ld * to.element_size, source + c * from.ld * from.element_size,
                column);
  // The data at home is now the instance's: valid, or spoilt by the failure that spoilt it.
  root.clear_poison();
  if (std::shared_ptr<const Failure> failure = instance.poison_before(instance_required))
    root.poison(std::move(failure), root_required);
}

}  // namespace versa::detail
