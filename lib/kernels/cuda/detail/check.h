#pragma once
// Internal to the CUDA backend: CUDA runtime results turned into kusari errors, and the check that a
// device exists before anything is queued on it.

#include <cuda_runtime_api.h>

#include <kusari/core/device.h>
#include <kusari/core/error.h>

namespace kusari::kernels::cuda {

// Throws DeviceError "<what>: <CUDA's message> (<error name>)" unless status is cudaSuccess.
inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    cudaGetLastError();  // resets the last-error state (a non-sticky error would otherwise be reported again)
    throw DeviceError(cat(what, ": ", cudaGetErrorString(status), " (", cudaGetErrorName(status), ")"));
  }
}

// The most devices one process addresses (a node has at most 16 GPUs today; room to spare): the size of
// the backend's per-device tables, whose index require_device checks.
constexpr int kMaxDevices = 64;

// Throws DeviceError naming `what` unless `device` is a CUDA device this process has (the check every
// allocation and kernel makes first, so a machine without a GPU fails with "no CUDA device").
void require_device(const Device& device, const char* what);

// Makes a device current for its lifetime and restores the previous one after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

}  // namespace kusari::kernels::cuda
