#include "base/names.hpp"

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace versa::detail {

std::string quoted_handle(const std::string& name) {
  return name.empty() ? std::string("an unnamed handle") : "handle '" + name + "'";
}

std::string format_bytes(std::size_t bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (value == static_cast<double>(static_cast<std::size_t>(value))) {
    std::snprintf(text, sizeof text, "%zu %s", static_cast<std::size_t>(value), units[unit]);
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  }
  return text;
}

std::string type_name(const std::type_info& type) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : std::string(type.name());
}

}  // namespace versa::detail
