// Helpers shared by the benchmarks that drive StarPU.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace bench {

// Throws when a StarPU call returned an error code.
inline void check(int ret, const char* what) {
  if (ret != 0)
    throw std::runtime_error(std::string("StarPU: ") + what + " failed (" + std::to_string(ret) +
                             ")");
}

// Keeps StarPU quiet and confines its on-disk state (bus and performance-model calibration files)
// to a directory under the system's temporary directory rather than $HOME. Values already present
// in the environment win, so a user can still point StarPU elsewhere or turn the messages back on.
inline void prepare_starpu_environment() {
  static const bool prepared = [] {
    ::setenv("STARPU_SILENT", "1", 0);
    std::error_code ec;
    const auto home = std::filesystem::temp_directory_path(ec) / "versa-bench-starpu";
    std::filesystem::create_directories(home, ec);
    ::setenv("STARPU_HOME", home.c_str(), 0);
    return true;
  }();
  (void)prepared;
}

}  // namespace bench
