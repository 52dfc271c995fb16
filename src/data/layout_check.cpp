#include "data/layout_check.hpp"

#include <stdexcept>

namespace versa::detail {

void check_layout(const Layout& layout, const std::string& name) {
  const std::string handle = name.empty() ? "a handle" : "'" + name + "'";
  if (layout.ld < layout.rows)
    throw std::invalid_argument("cannot register " + handle + " with leading dimension " +
                                std::to_string(layout.ld) + " smaller than its row count " +
                                std::to_string(layout.rows));
  if (layout.overflows())
    throw std::length_error(
        "cannot register " + handle + " of " + std::to_string(layout.rows) + " x " +
        std::to_string(layout.cols) + " elements (leading dimension " + std::to_string(layout.ld) +
        ") of " + std::to_string(layout.element_size) + " bytes: its size in bytes overflows");
}

}  // namespace versa::detail
