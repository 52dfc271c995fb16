// Runtime configurations shared by the tests.
#pragma once

#include "versa/config.hpp"

namespace versa::testing {

// `n` CPU workers, unpinned: tests run beside each other and beside other jobs. No GPU: the
// tests that want one ask for it, and the others count on their devices being what they set up.
// Tasks are tracked and a stall is reported after a minute (on stderr, or to the test's
// diagnostics hook), so a test that hangs says what waits for what before its time limit. The
// performance model is kept nowhere: with a GPU the runtime would keep it in the machine's cache,
// one file for every test of versa_tests, so that what one test (or an earlier run, or a suite
// running beside it) measured would decide what another explores and where its tasks run.
inline Config workers(int n) {
  Config config;
  config.cpu_workers = n;
  config.gpus = 0;
  config.pin_workers = false;
  config.quiet = true;
  config.perf_model_file = "none";
  config.track_tasks = true;
  config.stall_report_seconds = 60;
  return config;
}

// `config` without task tracking, as the benchmarks and most programs run: tasks without accesses
// then take the runtime's short paths (Scheduler::submit_plain, spawn's in-place closure), which
// tracking turns off. The stall report, which needs tracking, is off too.
inline Config untracked(Config config) {
  config.track_tasks = false;
  config.stall_report_seconds = 0;
  return config;
}

// `config` with registration handed to idle workers (Config::defer_registration), which task
// tracking would turn off: untracked, so the stall report is off too.
inline Config deferring(Config config) {
  config.defer_registration = true;
  return untracked(config);
}

// `config` plus `devices` emulated accelerators of `memory_bytes` each, with instant copies
// (tests exercise the protocol, not the modelled link).
inline Config with_emulated(Config config, int devices, std::size_t memory_bytes = 64 << 20) {
  config.emulated_devices.resize(devices);
  for (EmulatedDeviceConfig& device : config.emulated_devices) {
    device.memory_bytes = memory_bytes;
    device.bandwidth_bytes_per_s = 0;
    device.latency_s = 0;
  }
  return config;
}

}  // namespace versa::testing
