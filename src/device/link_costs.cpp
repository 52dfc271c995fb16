#include "device/link_costs.hpp"

#include <fstream>
#include <sstream>

#include "base/cache_files.hpp"

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
  return replace_file(path_, [this](std::ostream& out) {
    out.precision(17);
    for (const auto& [key, cost] : costs_)
      out << key << ' ' << cost.bandwidth << ' ' << cost.latency << '\n';
  });
}

std::string LinkCosts::default_path() {
  const std::string directory = cache_directory();
  return directory.empty() ? directory : directory + "/link-costs";
}

}  // namespace versa::detail
