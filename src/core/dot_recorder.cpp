#include "core/dot_recorder.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>
#include <utility>

#include "data/handle_state.hpp"

namespace versa::detail {

namespace {
// A DOT double-quoted string: quotes and backslashes escaped, control characters dropped.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + '"';
}
}  // namespace

DotRecorder::DotRecorder(int workers, bool times)
    : times_(times), origin_(Clock::now()), workers_(static_cast<std::size_t>(workers)) {}

void DotRecorder::handle_created(std::uint64_t id, const std::string& name) {
  MutexLock guard(names_mutex_);
  handle_names_.emplace(id, name);
}

void DotRecorder::handle_renamed(std::uint64_t instance, std::uint64_t root) {
  std::string label = handle_label(root) + " (renamed)";
  MutexLock guard(names_mutex_);
  handle_names_.emplace(instance, std::move(label));
}

void DotRecorder::add(Records& records, const Task& task, int ran_on, int node, bool timed,
                      Clock::time_point start, Clock::time_point end) {
  const Kind kind = task.host_access       ? Kind::host_access
                    : task.reduction_flush ? Kind::flush
                                           : Kind::task;
  records.nodes.push_back({task.name, kind, ran_on, node,
                           static_cast<std::uint32_t>(records.accesses.size()), task.access_count,
                           timed, start, end});
  for (std::uint32_t i = 0; i < task.access_count; ++i)
    records.accesses.push_back({task.accesses[i].handle->id(), task.progress(i).required_version});
}

void DotRecorder::record(const Task& task, int worker, int ran_on, int node, bool timed,
                         Clock::time_point start, Clock::time_point end) {
  if (worker >= 0) {
    add(workers_[worker], task, ran_on, node, timed, start, end);
    return;
  }
  MutexLock guard(others_mutex_);
  add(others_, task, ran_on, node, timed, start, end);
}

void DotRecorder::write(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write the DOT file '" + path + "'");
  write(out);
  if (!out) throw std::runtime_error("error while writing the DOT file '" + path + "'");
}

std::string DotRecorder::where(const Node& node) const {
  if (node.node > 0)
    return static_cast<std::size_t>(node.node) < node_names_.size()
               ? node_names_[node.node]
               : "device " + std::to_string(node.node);
  if (node.ran_on >= 0) return "cpu worker " + std::to_string(node.ran_on);
  if (node.kind == Kind::host_access) return "host";
  return "not run";  // cancelled, or a flush with nothing to apply
}

std::string DotRecorder::handle_label(std::uint64_t id) {
  MutexLock guard(names_mutex_);
  auto found = handle_names_.find(id);
  if (found != handle_names_.end() && !found->second.empty()) return found->second;
  std::string label = std::to_string(id);
  label.insert(label.begin(), '#');  // not "#" + ...: GCC 12 warns wrongly (-Wrestrict) there
  return label;
}

void DotRecorder::write_nodes(std::ostream& out, const std::vector<const Node*>& nodes) const {
  auto micros = [this](Clock::time_point t) {
    return std::to_string(std::chrono::duration<double, std::micro>(t - origin_).count());
  };
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = *nodes[i];
    const std::string name = node.name ? node.name : "";
    const std::string place = where(node);
    std::string label = name + "\n" + place;
    std::string times;
    if (node.timed) {
      const std::string start = micros(node.start), end = micros(node.end);
      label += "\n" + start + " to " + end + " us";
      times = ", start_us=" + quoted(start) + ", end_us=" + quoted(end);
    }
    const char* kind = node.kind == Kind::flush         ? "flush"
                       : node.kind == Kind::host_access ? "host_access"
                                                        : "task";
    const char* shape = node.kind == Kind::flush         ? "diamond"
                        : node.kind == Kind::host_access ? "ellipse"
                                                         : "box";
    out << "  t" << i << " [label=" << quoted(label) << ", shape=" << shape << ", kind=\"" << kind
        << "\", name=" << quoted(name) << ", where=" << quoted(place) << times << "];\n";
  }
}

void DotRecorder::write(std::ostream& out) {
  std::vector<const Node*> nodes;
  std::vector<const Records*> owners;  // the records each node's accesses are in
  MutexLock guard(others_mutex_);
  for (const Records* records = workers_.data(); records != workers_.data() + workers_.size();
       ++records)
    for (const Node& node : records->nodes) {
      nodes.push_back(&node);
      owners.push_back(records);
    }
  for (const Node& node : others_.nodes) {
    nodes.push_back(&node);
    owners.push_back(&others_);
  }
  // Per handle, the nodes of each run (by required version), in version order.
  std::map<std::uint64_t, std::map<std::uint64_t, std::vector<std::size_t>>> runs;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (std::uint32_t a = 0; a < nodes[i]->access_count; ++a) {
      const Access& access = owners[i]->accesses[nodes[i]->first_access + a];
      runs[access.handle][access.required].push_back(i);
    }
  out << "digraph versa {\n  node [shape=box];\n";
  write_nodes(out, nodes);
  for (const auto& [handle, by_version] : runs) {
    const std::string label = quoted(handle_label(handle));
    const std::vector<std::size_t>* previous = nullptr;
    for (const auto& [required, run] : by_version) {
      if (previous)
        for (std::size_t from : *previous)
          for (std::size_t to : run)
            out << "  t" << from << " -> t" << to << " [label=" << label << "];\n";
      previous = &run;
    }
  }
  out << "}\n";
}

}  // namespace versa::detail
