#include "device/link_costs.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace versa::detail {

LinkCosts::LinkCosts(std::string path) : path_(std::move(path)) {
  if (path_.empty()) return;
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    LinkCost cost;
    std::string rest;
    if (fields >> key >> cost.bandwidth >> cost.latency && !(fields >> rest) &&
        cost.bandwidth > 0 && cost.latency >= 0)
      put(key, cost);
  }
  changed_ = false;
}

std::optional<LinkCost> LinkCosts::find(const std::string& key) const {
  for (const auto& [known, cost] : costs_)
    if (known == key) return cost;
  return std::nullopt;
}

void LinkCosts::put(const std::string& key, LinkCost cost) {
  changed_ = true;
  for (auto& [known, kept] : costs_)
    if (known == key) {
      kept = cost;
      return;
    }
  costs_.emplace_back(key, cost);
}

std::string LinkCosts::save() const {
  if (!changed_ || path_.empty()) return {};
  const std::filesystem::path path(path_);
  std::error_code error;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
  // Aside under a name of this process's own, then renamed over the file in one step.
  const std::string aside = path_ + "." + std::to_string(::getpid());
  {
    std::ofstream out(aside, std::ios::trunc);
    out.precision(17);
    for (const auto& [key, cost] : costs_)
      out << key << ' ' << cost.bandwidth << ' ' << cost.latency << '\n';
    out.flush();
    if (!out) {
      std::filesystem::remove(aside, error);
      return "cannot write the link costs to " + aside;
    }
  }
  std::filesystem::rename(aside, path, error);
  if (error) {
    std::filesystem::remove(aside, error);
    return "cannot replace " + path_ + ": " + error.message();
  }
  return {};
}

std::string LinkCosts::default_path() {
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache)
    return std::string(cache) + "/versa/link-costs";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/versa/link-costs";
  return {};
}

}  // namespace versa::detail
