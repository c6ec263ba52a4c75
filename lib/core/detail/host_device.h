#pragma once
// Internal: marks a function that both the host and (under nvcc) the device compile, for the math that
// the CPU and CUDA backends share.

#if defined(__CUDACC__)
#define KUSARI_HOST_DEVICE __host__ __device__
#else
#define KUSARI_HOST_DEVICE
#endif
