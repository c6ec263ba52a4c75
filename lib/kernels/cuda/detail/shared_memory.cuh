#pragma once
// Internal to the CUDA backend: block-shared arrays, declared so that the host emulation can hand each
// block its arrays as garbage (0xff bytes: NaN in every floating type, -1 in every integer), where a
// GPU leaves whatever an earlier block wrote; a read before any thread of the block wrote then shows.

#if defined(KUSARI_CUDA_EMULATION)
#include <kusari/kernels/cuda/detail/emulated_threads.h>

// A block-shared array `name` of `count` elements of `type`, inside a kernel.
#define KUSARI_SHARED_ARRAY(type, name, count) \
  static thread_local type name[count];        \
  ::kusari::kernels::cuda::emulation::fresh_in_each_block(name, sizeof(name))
#else
// A block-shared array `name` of `count` elements of `type`, inside a kernel.
#define KUSARI_SHARED_ARRAY(type, name, count) __shared__ type name[count]
#endif
