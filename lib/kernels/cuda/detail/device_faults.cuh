#pragma once
// Internal to the CUDA backend: a kernel's side of device_faults.h.

#include <kusari/kernels/cuda/detail/device_faults.h>

namespace kusari::kernels::cuda {

// Records a fault in `record` unless one is recorded already since the host last looked: the fields
// first, the kind last, so that a host that sees the kind sees the fields.
__device__ inline void record_fault(DeviceFault* record, FaultKind kind, int64_t sample, int64_t value,
                                    int64_t bound) {
  if (atomicCAS(&record->claimed, 0u, 1u) != 0u) return;
  record->sample = sample;
  record->value = value;
  record->bound = bound;
  __threadfence_system();
  *static_cast<volatile int32_t*>(&record->kind) = static_cast<int32_t>(kind);
}

}  // namespace kusari::kernels::cuda
