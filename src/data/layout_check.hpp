// The checks of a handle's shape that every registration makes before anything is allocated
// for it or registered: the local runtime's handles and scratch data, and versa::mpi's copies.
#pragma once

#include <string>

#include "versa/detail/task_glue.hpp"

namespace versa::detail {

// Throws std::invalid_argument for a leading dimension smaller than the rows, and
// std::length_error when the bytes the data spans overflow std::size_t, naming the handle.
void check_layout(const Layout& layout, const std::string& name);

}  // namespace versa::detail
