#pragma once
// What the CUDA backend tells its users: whether it is there, how many devices it sees, and the calls
// of torch.cuda's that a training loop needs (synchronize, empty_cache, peak memory, cuDNN's benchmark mode). Present in every build; a
// build without CUDA answers "none" (built_with_cuda() false, device_count() 0).

#include <string>

#include <kusari/core/api.h>

namespace kusari::cuda {

// True when this libkusari was built with its CUDA backend (meson -Dcuda, nvcc found).
KUSARI_API bool built_with_cuda();
// True when that backend is the host emulation (meson -Dcuda-emulation=true): one device whose kernels
// run on the CPU's threads, for testing them without a GPU (cuBLASLt's product, cuDNN's convolutions
// and fused batch normalization, and NCCL's collectives emulated too).
KUSARI_API bool emulated();
// The number of CUDA devices this process can use: 0 without the backend, a driver or a GPU.
KUSARI_API int device_count();
// Why device_count() is 0 ("" when it is not): a build without CUDA, or what cudaGetDeviceCount said.
KUSARI_API std::string unavailable_reason();
// Blocks until the work queued on device `index`'s streams has finished; throws DeviceError for a
// device this process does not have, and IndexError for what a kernel found wrong in its operands on the
// device since the last synchronization (a label outside its classes: raised here, not by the call).
KUSARI_API void synchronize(int index);
// Returns every cached, unused block of device memory to the driver (torch.cuda.empty_cache()).
KUSARI_API void empty_cache();
// Starts the devices' peak memory counters (the allocator's peak_bytes_in_use and peak_bytes_held) over
// from what is in use and held now (torch.cuda.reset_peak_memory_stats()).
KUSARI_API void reset_peak_memory_stats();
// Whether convolutions choose each shape's cuDNN algorithm by timing the candidates (the first call of a
// shape then takes longer) instead of by cuDNN's heuristics (torch.backends.cudnn.benchmark); it starts as
// KUSARI_CUDNN_BENCHMARK says (1 on; 0 or unset off) and applies to shapes not yet seen.
KUSARI_API void set_cudnn_benchmark(bool enabled);
// The setting; ValueError when KUSARI_CUDNN_BENCHMARK is set to other than 0 or 1.
KUSARI_API bool cudnn_benchmark();

}  // namespace kusari::cuda
