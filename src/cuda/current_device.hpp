// The calling thread's current CUDA device. The runtime calls a device from arbitrary threads
// (device workers, the thread that frees a handle, the main thread), and most CUDA calls act on
// whichever device is current on the calling thread, so every entry point of the backend makes
// its own device current first.
#pragma once

#include <cuda_runtime_api.h>

namespace versa::detail {

// Makes device `ordinal` current on this thread for the guard's lifetime and restores the
// previous one afterwards, so that a caller's own CUDA code keeps its device. Costs a
// thread-local read when the device is already current.
class CurrentDeviceGuard {
 public:
  explicit CurrentDeviceGuard(int ordinal) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (previous_ == ordinal) {
      previous_ = -1;  // nothing to restore
    } else {
      status_ = cudaSetDevice(ordinal);
    }
  }
  ~CurrentDeviceGuard() {
    if (previous_ >= 0) (void)cudaSetDevice(previous_);
  }
  CurrentDeviceGuard(const CurrentDeviceGuard&) = delete;
  CurrentDeviceGuard& operator=(const CurrentDeviceGuard&) = delete;

  // Whether making the device current succeeded (it fails for an invalid ordinal).
  cudaError_t status() const { return status_; }

 private:
  int previous_ = -1;  // device to restore, or -1
  cudaError_t status_ = cudaSuccess;
};

// A std::unique_ptr deleter that releases a CUDA or library handle with `release` while the
// handle's device is current (the deleter may run on any thread, e.g. while a constructor that
// failed half-way unwinds).
template <class Handle, auto release>
struct ReleaseOnDevice {
  int ordinal = 0;
  void operator()(Handle handle) const {
    CurrentDeviceGuard guard(ordinal);
    (void)release(handle);
  }
};

}  // namespace versa::detail
