// What the runtime has to tell that no call returns: failures nobody asked about, misuse found
// away from the call that caused it, errors while shutting down. One channel, so that the
// library never prints from where it happens to be: Config::diagnostics receives each message
// as it comes; without it, the messages are written to stderr once, when the runtime is
// destroyed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/mutex.hpp"
#include "base/thread_annotations.hpp"

namespace versa::detail {

class Diagnostics {
 public:
  using Hook = std::function<void(const std::string& message)>;

  // Without a hook, the messages are written as "<label>: <message>".
  Diagnostics(Hook hook, std::string label) : hook_(std::move(hook)), label_(std::move(label)) {}
  // Writes the messages held (no hook) to stderr.
  ~Diagnostics();
  Diagnostics(const Diagnostics&) = delete;
  Diagnostics& operator=(const Diagnostics&) = delete;

  // Passes `message` to the hook, or holds it for the destructor. Any thread.
  void report(std::string message);

 private:
  const Hook hook_;
  const std::string label_;
  Mutex mutex_;
  std::vector<std::string> held_ VERSA_GUARDED_BY(mutex_);
};

}  // namespace versa::detail
