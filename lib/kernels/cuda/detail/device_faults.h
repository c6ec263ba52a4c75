#pragma once
// Internal to the CUDA backend: what a kernel finds wrong in its operands on the device (a label outside
// its classes), recorded in pinned host memory that the device writes, and raised by the host at its
// next synchronization with that device (a copy to the host, cuda::synchronize) instead of at a
// synchronization of its own: checking costs the step nothing. The first fault since the host last
// looked is kept; the faulty kernel's results for that sample are NaN.

#include <cstdint>

namespace kusari::kernels::cuda {

// The faults a kernel records.
enum class FaultKind : int32_t { none = 0, softmax_cross_entropy_label = 1 };

// The first fault of a device since the host last looked: which, in which sample, what came (a label)
// and the bound it broke (labels in [0, bound)).
struct DeviceFault {
  uint32_t claimed;  // 0 until a kernel claims the record
  int32_t kind;
  int64_t sample, value, bound;
};

// The record of device `index` as the device addresses it (made at first use).
DeviceFault* device_fault_record(int index);

// Throws IndexError naming the fault recorded on device `index` since the last look (clearing it), if
// any; call once the host has synchronized with the work that may have recorded it (a record that a
// kernel still running elsewhere is writing waits for a later call).
void raise_device_fault(int index);

}  // namespace kusari::kernels::cuda
