#include "versa/config.hpp"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace versa {

namespace {
constexpr int max_cpu_workers = 4096;

[[noreturn]] void bad_variable(const char* variable, const char* value, const char* expected) {
  throw std::invalid_argument(std::string(variable) + "='" + value + "' is invalid: expected " +
                              expected);
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
}  // namespace

Config Config::from_environment(Config base) {
  if (const char* value = std::getenv("VERSA_NCPU"))
    base.cpu_workers = static_cast<int>(
        parse_integer("VERSA_NCPU", value, 1, max_cpu_workers, "an integer from 1 to 4096"));
  if (const char* value = std::getenv("VERSA_PIN"))
    base.pin_workers = parse_integer("VERSA_PIN", value, 0, 1, "0 or 1") == 1;
  if (const char* value = std::getenv("VERSA_TRACE")) base.trace_file = value;
  if (base.cpu_workers < 0 || base.cpu_workers > max_cpu_workers)
    throw std::invalid_argument("Config::cpu_workers = " + std::to_string(base.cpu_workers) +
                                " is out of range: expected 0 (one per core) to 4096");
  return base;
}

}  // namespace versa
