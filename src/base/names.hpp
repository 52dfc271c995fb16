// How messages name things: handles and sizes, worded the same everywhere.
#pragma once

#include <cstddef>
#include <string>
#include <typeinfo>

namespace versa::detail {

// "handle 'x'" for a named handle, "an unnamed handle" for one registered without a name.
std::string quoted_handle(const std::string& name);

// A size: "512 B", "8 MiB", "1.5 GiB" (whole numbers print without a fraction).
std::string format_bytes(std::size_t bytes);

// A type as C++ spells it ("double", "long"), demangled where the ABI allows.
std::string type_name(const std::type_info& type);

}  // namespace versa::detail
