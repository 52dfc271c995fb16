// The device benchmark suites (bench/devices/main.cpp).
#pragma once

namespace bench {

struct DeviceOptions {
  int reps = 5;
  bool quick = false;
};

void suite_overlap(const DeviceOptions& options);
void suite_placement(const DeviceOptions& options);
void suite_task_rate(const DeviceOptions& options);
void suite_pinning(const DeviceOptions& options);
void suite_concurrency(const DeviceOptions& options);

}  // namespace bench
