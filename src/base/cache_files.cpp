#include "base/cache_files.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace versa::detail {

std::string cache_directory() {
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache)
    return std::string(cache) + "/versa";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/versa";
  return {};
}

std::string replace_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path target(path);
  std::error_code error;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), error);
  const std::string aside = path + "." + std::to_string(::getpid());
  {
    std::ofstream out(aside, std::ios::trunc);
    if (out) write(out);
    out.flush();
    if (!out) {
      std::filesystem::remove(aside, error);
      return "cannot write " + aside;
    }
  }
  std::filesystem::rename(aside, target, error);
  if (error) {
    const std::string why = "cannot replace " + path + ": " + error.message();
    std::filesystem::remove(aside, error);
    return why;
  }
  return {};
}

}  // namespace versa::detail
