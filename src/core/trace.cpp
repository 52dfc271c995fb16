#include "core/trace.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <ostream>
#include <stdexcept>

namespace versa::detail {

namespace {

constexpr int device_track_count = 5;  // besides the kernel streams'
constexpr std::array<const char*, device_track_count> device_track_names = {
    "copies to device", "copies to host", "evictions", "reduction flushes", "worker thread"};
constexpr std::array<const char*, device_track_count> device_track_categories = {
    "copy", "copy", "eviction", "flush", "worker"};

// The slice of an operation that the device measured at `seconds` and that has just completed.
TraceRecorder::Clock::time_point started(TraceRecorder::Clock::time_point end, double seconds) {
  return end - std::chrono::duration_cast<TraceRecorder::Clock::duration>(
                   std::chrono::duration<double>(seconds));
}

void write_json_string(std::ostream& out, std::string_view text) {
  out << '"';
  for (const char c : text) {
    switch (c) {
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
        out << (static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
    }
  }
  out << '"';
}

}  // namespace

struct TraceRecorder::DeviceTracks {
  std::string name;
  int streams = 0;  // kernel streams; the tracks of `kernels` after theirs: high-priority ones
  SpinLock lock;
  std::vector<std::vector<Slice>> kernels VERSA_GUARDED_BY(lock);  // per kernel stream
  std::array<std::vector<Detailed>, device_track_count> events VERSA_GUARDED_BY(lock);
};

// One event per line, so that a reader can grep the file.
class TraceRecorder::Writer {
 public:
  Writer(std::ostream& out, Clock::time_point origin) : out_(out), origin_(origin) {
    out_.precision(3);
    out_ << std::fixed;
  }

  void name(const char* what, int pid, int tid, std::string_view name) {
    begin(what, "M", pid, tid);
    out_ << ",\"args\":{\"name\":";
    write_json_string(out_, name);
    out_ << "}}";
  }
  void process_order(int pid) {
    begin("process_sort_index", "M", pid, 0);
    out_ << ",\"args\":{\"sort_index\":" << pid << "}}";
  }
  void slice(const Slice& slice, const char* category, int pid, int tid) {
    begin(slice.name, "X", pid, tid);
    out_ << ",\"cat\":\"" << category << "\",\"ts\":" << micros(slice.start)
         << ",\"dur\":" << micros(slice.end) - micros(slice.start) << '}';
  }
  void detailed(const Detailed& event, const char* category, bool instant, int pid, int tid) {
    begin(event.name, instant ? "i" : "X", pid, tid);
    out_ << ",\"cat\":\"" << category << "\",\"ts\":" << micros(event.start);
    if (instant) {
      out_ << ",\"s\":\"t\"";
    } else {
      out_ << ",\"dur\":" << micros(event.end) - micros(event.start);
    }
    if (event.bytes != 0 || !event.handle.empty()) {
      out_ << ",\"args\":{";
      if (event.bytes != 0)
        out_ << "\"bytes\":" << event.bytes << (event.handle.empty() ? "" : ",");
      if (!event.handle.empty()) {
        out_ << "\"handle\":";
        write_json_string(out_, event.handle);
      }
      out_ << '}';
    }
    out_ << '}';
  }
  void counter(const Sample& sample) {
    begin("ready tasks", "C", 0, 0);
    out_ << ",\"ts\":" << micros(sample.time) << ",\"args\":{\"ready\":" << sample.ready << "}}";
  }

 private:
  void begin(std::string_view name, const char* phase, int pid, int tid) {
    out_ << (first_ ? "\n" : ",\n") << "{\"name\":";
    first_ = false;
    write_json_string(out_, name);
    out_ << ",\"ph\":\"" << phase << "\",\"pid\":" << pid << ",\"tid\":" << tid;
  }
  double micros(Clock::time_point t) const {
    return std::chrono::duration<double, std::micro>(t - origin_).count();
  }

  std::ostream& out_;
  Clock::time_point origin_;
  bool first_ = true;
};

TraceRecorder::TraceRecorder(bool enabled, int workers)
    : enabled_(enabled), origin_(Clock::now()), workers_(enabled ? workers : 0) {
  for (int w = 0; w < static_cast<int>(workers_.size()); ++w)
    workers_[w].name = "cpu worker " + std::to_string(w);
}

TraceRecorder::~TraceRecorder() = default;

void TraceRecorder::add_device(const std::string& name, int streams, int priority_streams) {
  if (!enabled_) return;
  auto device = std::make_unique<DeviceTracks>();
  device->name = name;
  device->streams = streams;
  {
    SpinGuard guard(device->lock);
    device->kernels.resize(static_cast<std::size_t>(streams + priority_streams));
  }
  devices_.push_back(std::move(device));
}

void TraceRecorder::record_flush(int worker, const char* name, std::string_view handle,
                                 Clock::time_point start, Clock::time_point end) {
  workers_[worker].flushes.push_back({name, start, end, 0, std::string(handle)});
}

void TraceRecorder::record_device(int node, DeviceTrack track, const char* name, double seconds,
                                  std::uint64_t bytes, std::string_view handle) {
  const Clock::time_point end = Clock::now();
  const Clock::time_point start = track == DeviceTrack::evictions ? end : started(end, seconds);
  DeviceTracks& device = *devices_[node - 1];
  Detailed event{name, start, end, bytes, std::string(handle)};  // allocated outside the lock
  SpinGuard guard(device.lock);
  device.events[static_cast<int>(track)].push_back(std::move(event));
}

void TraceRecorder::record_kernel(int node, int stream, const char* name, double seconds) {
  const Clock::time_point end = Clock::now();
  DeviceTracks& device = *devices_[node - 1];
  SpinGuard guard(device.lock);
  device.kernels[static_cast<std::size_t>(stream)].push_back({name, started(end, seconds), end});
}

void TraceRecorder::ready_changed(int worker, int delta) {
  const std::int64_t ready = ready_.fetch_add(delta, std::memory_order_relaxed) + delta;
  const Sample sample{Clock::now(), ready};
  if (worker >= 0) {
    workers_[worker].samples.push_back(sample);
    return;
  }
  SpinGuard guard(other_samples_lock_);
  other_samples_.push_back(sample);
}

void TraceRecorder::write(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write the trace file '" + path + "'");
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  Writer writer(out, origin_);
  writer.name("process_name", 0, 0, "host");
  writer.process_order(0);
  for (std::size_t w = 0; w < workers_.size(); ++w)
    writer.name("thread_name", 0, static_cast<int>(w), workers_[w].name);
  // A device's tracks: its kernel streams' (tid 0 on), then the others.
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    DeviceTracks& device = *devices_[d];
    const int pid = static_cast<int>(d) + 1;
    writer.name("process_name", pid, 0, device.name);
    writer.process_order(pid);
    SpinGuard guard(device.lock);
    const int kernel_tracks = static_cast<int>(device.kernels.size());
    for (int s = 0; s < kernel_tracks; ++s)
      writer.name("thread_name", pid, s,
                  device.name + (s < device.streams ? " kernels, stream " + std::to_string(s)
                                                    : " kernels, high-priority stream " +
                                                          std::to_string(s - device.streams)));
    for (int t = 0; t < device_track_count; ++t)
      writer.name("thread_name", pid, kernel_tracks + t, device.name + " " + device_track_names[t]);
  }
  std::vector<Sample> samples;
  for (std::size_t w = 0; w < workers_.size(); ++w) {
    const WorkerTrack& track = workers_[w];
    for (const Slice& s : track.slices) writer.slice(s, "task", 0, static_cast<int>(w));
    for (const Detailed& f : track.flushes)
      writer.detailed(f, "flush", false, 0, static_cast<int>(w));
    samples.insert(samples.end(), track.samples.begin(), track.samples.end());
  }
  constexpr int evictions = static_cast<int>(DeviceTrack::evictions);
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    DeviceTracks& device = *devices_[d];
    const int pid = static_cast<int>(d) + 1;
    SpinGuard guard(device.lock);
    const int kernel_tracks = static_cast<int>(device.kernels.size());
    for (int s = 0; s < kernel_tracks; ++s)
      for (const Slice& k : device.kernels[static_cast<std::size_t>(s)])
        writer.slice(k, "task", pid, s);
    for (int t = 0; t < device_track_count; ++t)
      for (const Detailed& e : device.events[t])
        writer.detailed(e, device_track_categories[t], t == evictions, pid, kernel_tracks + t);
  }
  {
    SpinGuard guard(other_samples_lock_);
    samples.insert(samples.end(), other_samples_.begin(), other_samples_.end());
  }
  // Samples from different threads interleave: in time order, the counter reads as a line.
  std::stable_sort(samples.begin(), samples.end(),
                   [](const Sample& a, const Sample& b) { return a.time < b.time; });
  for (const Sample& s : samples) writer.counter(s);
  out << "\n]}\n";
  if (!out) throw std::runtime_error("error while writing the trace file '" + path + "'");
}

}  // namespace versa::detail
