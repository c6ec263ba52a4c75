#pragma once
// The CUDA backend's host emulation (meson option cuda-emulation): its device's memory, host memory handed
// out by cudaMalloc (emulation/runtime_api.cpp), each allocation followed by a guard page, or mapped into
// reserved addresses by the driver's virtual memory calls (emulation/driver_memory.cpp).

#include <cstddef>
#include <utility>
#include <vector>

namespace kusari::kernels::cuda::emulation {

// cudaMalloc's alignment (and cudaHostAlloc's, as the emulation gives it).
inline constexpr size_t kAllocationAlignment = 256;

// Whether `bytes` from `data` lie in one allocation of the emulated device, or in one run of memory mapped
// into reserved addresses. These are the caching allocator's segments and expandable segments: a block of
// it cut short (within its size class's rounding) is not seen, unless KUSARI_CUDA_CACHE=0 gives every
// array an allocation of its own.
bool device_span(const void* data, size_t bytes);

// The emulated device's allocations and runs of mapped memory now (each by its first byte and size), by
// address.
std::vector<std::pair<const char*, size_t>> device_allocations();

// Counts `bytes` against the emulated device's memory; false (nothing counted) when it has fewer left.
bool claim_device_bytes(size_t bytes);
// Gives back bytes that claim_device_bytes counted.
void return_device_bytes(size_t bytes);
// Lists `bytes` mapped at `data` as the device's memory, one run with mapped memory listed next to it.
void list_mapped(const char* data, size_t bytes);
// Takes `bytes` at `data` out of the mapped memory listed.
void unlist_mapped(const char* data, size_t bytes);

// `bytes` of host memory at cudaMalloc's alignment, their end rounded to it meeting a page the process may
// not touch (an access there stops it after a line on stderr naming the allocation); nullptr when the
// host has no more (emulation/guarded_memory.cpp).
void* guarded_allocate(size_t bytes);
// Returns the `bytes` guarded_allocate(bytes) gave at `data`.
void guarded_release(void* data, size_t bytes);
// Puts the report of an access in a guard page back in front of SIGSEGV's action where a program (a test
// framework) has set its own since: at each allocation and before each kernel runs.
void keep_fault_report();

}  // namespace kusari::kernels::cuda::emulation
