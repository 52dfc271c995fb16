#include "core/trace.hpp"

#include <fstream>
#include <stdexcept>

namespace versa::detail {

namespace {
void write_json_string(std::ostream& out, const char* text) {
  out << '"';
  for (const char* c = text; *c; ++c) {
    switch (*c) {
      case '"':
        out << "\\\"";
        break;
      case '\\':
        out << "\\\\";
        break;
      case '\n':
        out << "\\n";
        break;
      default:
        if (static_cast<unsigned char>(*c) < 0x20) {
          out << ' ';
        } else {
          out << *c;
        }
    }
  }
  out << '"';
}
}  // namespace

TraceRecorder::TraceRecorder(bool enabled, int workers)
    : enabled_(enabled), origin_(Clock::now()), tracks_(enabled ? workers : 0) {
  for (int w = 0; w < static_cast<int>(tracks_.size()); ++w)
    tracks_[w].name = "cpu worker " + std::to_string(w);
}

int TraceRecorder::add_track(std::string name) {
  if (!enabled_) return -1;
  tracks_.emplace_back();
  tracks_.back().name = std::move(name);
  return static_cast<int>(tracks_.size()) - 1;
}

void TraceRecorder::write(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write the trace file '" + path + "'");
  auto micros = [this](Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - origin_).count();
  };
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  out << R"({"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"versa"}})";
  for (std::size_t w = 0; w < tracks_.size(); ++w) {
    out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" << w
        << ",\"args\":{\"name\":";
    write_json_string(out, tracks_[w].name.c_str());
    out << "}}";
  }
  out.precision(3);
  out << std::fixed;
  for (std::size_t w = 0; w < tracks_.size(); ++w) {
    for (const Event& e : tracks_[w].events) {
      out << ",\n{\"name\":";
      write_json_string(out, e.name);
      out << ",\"cat\":\"task\",\"ph\":\"X\",\"pid\":0,\"tid\":" << w
          << ",\"ts\":" << micros(e.start) << ",\"dur\":" << micros(e.end) - micros(e.start) << "}";
    }
  }
  out << "\n]}\n";
  if (!out) throw std::runtime_error("error while writing the trace file '" + path + "'");
}

}  // namespace versa::detail
