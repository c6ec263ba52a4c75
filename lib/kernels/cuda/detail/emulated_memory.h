#pragma once
// The CUDA backend's host emulation (meson option cuda-emulation): its device's memory, host memory handed
// out by cudaMalloc (emulation/runtime_api.cpp).

#include <cstddef>

namespace kusari::kernels::cuda::emulation {

// Whether `bytes` from `data` lie in one allocation of the emulated device. The allocations are the
// caching allocator's segments: a block of it cut short (within its size class's rounding) is not seen.
bool device_span(const void* data, size_t bytes);

}  // namespace kusari::kernels::cuda::emulation
