#include "versa/config.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace versa {

namespace {
constexpr int max_cpu_workers = 4096;
constexpr int max_devices = 64;
constexpr int max_cuda_streams = 32;
constexpr int max_tasks_per_stream = 16;
constexpr int max_panel_sms = 1024;
constexpr int min_submission_window = 64;  // above a thief's batch (WorkerPool::run_submitted)
constexpr long max_submission_window = 1L << 30;
constexpr double max_seconds = 1e6;

[[noreturn]] void bad_variable(const char* variable, const char* value, const char* expected) {
  throw std::invalid_argument(std::string(variable) + "='" + value + "' is invalid: expected " +
                              expected);
}

// A file the runtime writes when it ends (trace_file, dot_file) must be writable when it starts:
// a run of hours would otherwise lose it at its end. `setting` names the field and its variable.
void check_writable(const char* setting, const std::string& path) {
  if (path.empty()) return;
  const std::filesystem::path file(path);
  std::error_code error;
  const bool exists = std::filesystem::exists(file, error);
  std::string why;
  if (exists && std::filesystem::is_directory(file, error)) {
    why = "it is a directory";
  } else {
    const std::filesystem::path folder = file.has_parent_path() ? file.parent_path() : ".";
    if (::access(exists ? path.c_str() : folder.c_str(), W_OK) != 0) why = std::strerror(errno);
  }
  if (!why.empty())
    throw std::invalid_argument(std::string(setting) + " = '" + path +
                                "' cannot be written: " + why);
}

long parse_integer(const char* variable, const char* value, long low, long high,
                   const char* expected) {
  errno = 0;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || parsed < low || parsed > high)
    bad_variable(variable, value, expected);
  return parsed;
}

// A comma-separated list of GPU ordinals ("0,0,1").
std::vector<int> parse_ordinals(const char* variable, const char* value) {
  constexpr const char* expected = "up to 64 GPU ordinals from 0 to 63, such as 0,0,1";
  std::vector<int> ordinals;
  const char* item = value;
  for (;;) {
    errno = 0;
    char* end = nullptr;
    const long ordinal = std::strtol(item, &end, 10);
    if (errno != 0 || end == item || (*end != ',' && *end != '\0') || ordinal < 0 ||
        ordinal >= max_devices || ordinals.size() == static_cast<std::size_t>(max_devices))
      bad_variable(variable, value, expected);
    ordinals.push_back(static_cast<int>(ordinal));
    if (*end == '\0') return ordinals;
    item = end + 1;
  }
}

// A comma-separated list of task type names ("gemm,syrk"), none empty.
std::vector<std::string> parse_names(const char* variable, const char* value) {
  std::vector<std::string> names;
  std::string_view rest = value;
  for (;;) {
    const std::size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    if (name.empty()) bad_variable(variable, value, "task type names separated by commas");
    names.emplace_back(name);
    if (comma == std::string_view::npos) return names;
    rest.remove_prefix(comma + 1);
  }
}

double parse_seconds(const char* variable, const char* value) {
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(value, &end);
  if (errno != 0 || end == value || *end != '\0' || !(parsed >= 0 && parsed <= max_seconds))
    bad_variable(variable, value, "a number of seconds from 0 (off) to 1000000");
  return parsed;
}
}  // namespace

Config Config::from_environment(Config base) {
  if (const char* value = std::getenv("VERSA_NCPU"))
    base.cpu_workers = static_cast<int>(
        parse_integer("VERSA_NCPU", value, 1, max_cpu_workers, "an integer from 1 to 4096"));
  if (const char* value = std::getenv("VERSA_PIN"))
    base.pin_workers = parse_integer("VERSA_PIN", value, 0, 1, "0 or 1") == 1;
  if (const char* value = std::getenv("VERSA_CALLER_WORKS"))
    base.caller_runs_tasks = parse_integer("VERSA_CALLER_WORKS", value, 0, 1, "0 or 1") == 1;
  if (const char* value = std::getenv("VERSA_SUBMISSION_WINDOW")) {
    constexpr const char* expected = "-1 (64 per worker), 0 (no limit) or 64 to 1073741824";
    const long window =
        parse_integer("VERSA_SUBMISSION_WINDOW", value, -1, max_submission_window, expected);
    if (window > 0 && window < min_submission_window)
      bad_variable("VERSA_SUBMISSION_WINDOW", value, expected);
    base.submission_window = static_cast<int>(window);
  }
  if (const char* value = std::getenv("VERSA_LOCALITY"))
    base.locality = parse_integer("VERSA_LOCALITY", value, 0, 1, "0 or 1") == 1;
  if (const char* value = std::getenv("VERSA_DEFER_REGISTRATION"))
    base.defer_registration = parse_integer("VERSA_DEFER_REGISTRATION", value, 0, 1, "0 or 1") == 1;
  if (const char* value = std::getenv("VERSA_TRACE")) base.trace_file = value;
  if (const char* value = std::getenv("VERSA_NGPU"))
    base.gpus = static_cast<int>(
        parse_integer("VERSA_NGPU", value, 0, max_devices, "an integer from 0 to 64"));
  if (const char* value = std::getenv("VERSA_CUDA_DEVICES"))
    base.cuda_devices = parse_ordinals("VERSA_CUDA_DEVICES", value);
  if (const char* value = std::getenv("VERSA_CUDA_STREAMS"))
    base.cuda_streams = static_cast<int>(
        parse_integer("VERSA_CUDA_STREAMS", value, 1, max_cuda_streams, "an integer from 1 to 32"));
  if (const char* value = std::getenv("VERSA_CUDA_PRIORITY_STREAMS"))
    base.cuda_priority_streams =
        parse_integer("VERSA_CUDA_PRIORITY_STREAMS", value, 0, 1, "0 or 1") == 1;
  if (const char* value = std::getenv("VERSA_CUDA_MEMORY_POOL"))
    base.cuda_memory_pool = parse_integer("VERSA_CUDA_MEMORY_POOL", value, 0, 1, "0 or 1") == 1;
  if (const char* value = std::getenv("VERSA_CUDA_PANEL_SMS"))
    base.cuda_panel_sms = static_cast<int>(parse_integer(
        "VERSA_CUDA_PANEL_SMS", value, 0, max_panel_sms, "an integer from 0 to 1024"));
  if (const char* value = std::getenv("VERSA_DEVICE_SERIAL_TYPES"))
    base.device_serial_types = parse_names("VERSA_DEVICE_SERIAL_TYPES", value);
  if (const char* value = std::getenv("VERSA_DEVICE_TASKS_PER_STREAM"))
    base.device_tasks_per_stream =
        static_cast<int>(parse_integer("VERSA_DEVICE_TASKS_PER_STREAM", value, 1,
                                       max_tasks_per_stream, "an integer from 1 to 16"));
  if (const char* value = std::getenv("VERSA_EMULATED"))
    base.emulated_devices.resize(static_cast<std::size_t>(
        parse_integer("VERSA_EMULATED", value, 0, max_devices, "an integer from 0 to 64")));
  if (const char* value = std::getenv("VERSA_DEVICE_MEMORY"))
    base.device_memory_limit =
        static_cast<std::size_t>(parse_integer("VERSA_DEVICE_MEMORY", value, 1, 1L << 24,
                                               "a size in MiB from 1 to 16777216"))
        << 20;
  if (const char* value = std::getenv("VERSA_AUTO_PIN"))
    base.auto_pin_bytes =
        static_cast<std::size_t>(parse_integer("VERSA_AUTO_PIN", value, 0, 1L << 34,
                                               "a size in KiB from 0 (none) to 17179869184"))
        << 10;
  if (const char* value = std::getenv("VERSA_REDUCTION_MEMORY"))
    base.reduction_memory_limit =
        static_cast<std::size_t>(parse_integer("VERSA_REDUCTION_MEMORY", value, 0, 1L << 24,
                                               "a size in MiB from 0 to 16777216"))
        << 20;
  if (const char* value = std::getenv("VERSA_RENAME_MEMORY"))
    base.rename_memory_limit =
        static_cast<std::size_t>(parse_integer("VERSA_RENAME_MEMORY", value, 0, 1L << 24,
                                               "a size in MiB from 0 to 16777216"))
        << 20;
  if (const char* value = std::getenv("VERSA_PERF_MODEL")) base.perf_model_file = value;
  if (const char* value = std::getenv("VERSA_LINK_COSTS")) base.link_cost_file = value;
  if (const char* value = std::getenv("VERSA_QUIET"))
    base.quiet = parse_integer("VERSA_QUIET", value, 0, 1, "0 or 1") == 1;
  if (const char* value = std::getenv("VERSA_STATS"))
    base.print_statistics = parse_integer("VERSA_STATS", value, 0, 1, "0 or 1") == 1;
  if (const char* value = std::getenv("VERSA_DOT")) base.dot_file = value;
  if (const char* value = std::getenv("VERSA_DOT_TIMES"))
    base.dot_times = parse_integer("VERSA_DOT_TIMES", value, 0, 1, "0 or 1") == 1;
  if (const char* value = std::getenv("VERSA_STALL_REPORT"))
    base.stall_report_seconds = parse_seconds("VERSA_STALL_REPORT", value);
  if (const char* value = std::getenv("VERSA_PEER_TIMEOUT"))
    base.peer_timeout_seconds = parse_seconds("VERSA_PEER_TIMEOUT", value);
  if (const char* value = std::getenv("VERSA_TRACK_TASKS"))
    base.track_tasks = parse_integer("VERSA_TRACK_TASKS", value, 0, 1, "0 or 1") == 1;
  if (base.cpu_workers < 0 || base.cpu_workers > max_cpu_workers)
    throw std::invalid_argument("Config::cpu_workers = " + std::to_string(base.cpu_workers) +
                                " is out of range: expected 0 (one per core) to 4096");
  if (base.submission_window < -1 ||
      (base.submission_window > 0 && base.submission_window < min_submission_window) ||
      base.submission_window > max_submission_window)
    throw std::invalid_argument(
        "Config::submission_window = " + std::to_string(base.submission_window) +
        " is out of range: expected -1 (64 per worker), 0 (no limit) or "
        "64 to 1073741824");
  if (base.gpus < -1 || base.gpus > max_devices)
    throw std::invalid_argument("Config::gpus = " + std::to_string(base.gpus) +
                                " is out of range: expected -1 (all), 0 (none) to 64");
  if (base.cuda_devices.size() > static_cast<std::size_t>(max_devices))
    throw std::invalid_argument("Config::cuda_devices has " +
                                std::to_string(base.cuda_devices.size()) +
                                " entries: at most 64 are supported");
  for (const int ordinal : base.cuda_devices)
    if (ordinal < 0 || ordinal >= max_devices)
      throw std::invalid_argument("Config::cuda_devices names GPU " + std::to_string(ordinal) +
                                  ": expected ordinals from 0 to 63");
  if (base.cuda_streams < 1 || base.cuda_streams > max_cuda_streams)
    throw std::invalid_argument("Config::cuda_streams = " + std::to_string(base.cuda_streams) +
                                " is out of range: expected 1 to 32");
  if (base.cuda_panel_sms < 0 || base.cuda_panel_sms > max_panel_sms)
    throw std::invalid_argument("Config::cuda_panel_sms = " + std::to_string(base.cuda_panel_sms) +
                                " is out of range: expected 0 (off) to 1024");
  if (base.cuda_panel_sms > 0 && !base.cuda_priority_streams)
    throw std::invalid_argument("Config::cuda_panel_sms = " + std::to_string(base.cuda_panel_sms) +
                                " needs cuda_priority_streams: the panel's SMs run the "
                                "high-priority streams");
  if (base.device_tasks_per_stream < 1 || base.device_tasks_per_stream > max_tasks_per_stream)
    throw std::invalid_argument(
        "Config::device_tasks_per_stream = " + std::to_string(base.device_tasks_per_stream) +
        " is out of range: expected 1 to 16");
  for (const std::string& name : base.device_serial_types)
    if (name.empty())
      throw std::invalid_argument("Config::device_serial_types has an empty task type name");
  if (base.emulated_devices.size() > static_cast<std::size_t>(max_devices))
    throw std::invalid_argument("Config::emulated_devices has " +
                                std::to_string(base.emulated_devices.size()) +
                                " entries: at most 64 are supported");
  if (base.device_memory_limit != 0 && base.device_memory_limit < 64)
    throw std::invalid_argument(
        "Config::device_memory_limit = " + std::to_string(base.device_memory_limit) +
        " is too small: expected 0 (no limit) or at least 64 bytes");
  if (!(base.stall_report_seconds >= 0 && base.stall_report_seconds <= max_seconds))
    throw std::invalid_argument(
        "Config::stall_report_seconds = " + std::to_string(base.stall_report_seconds) +
        " is out of range: expected 0 (off) to 1000000");
  if (!(base.peer_timeout_seconds >= 0 && base.peer_timeout_seconds <= max_seconds))
    throw std::invalid_argument(
        "Config::peer_timeout_seconds = " + std::to_string(base.peer_timeout_seconds) +
        " is out of range: expected 0 (off) to 1000000");
  if (base.label.empty()) throw std::invalid_argument("Config::label is empty");
  check_writable("Config::trace_file (VERSA_TRACE)", base.trace_file);
  check_writable("Config::dot_file (VERSA_DOT)", base.dot_file);
  return base;
}

}  // namespace versa
