#pragma once
// Internal to the CUDA backend: launching a kernel (the one place that does, so that the host emulation
// runs every kernel), and an elementwise kernel over N operands of one device, on that device's compute
// stream, with the grid-stride loop its body runs in.

#include <array>
#include <tuple>
#include <type_traits>
#include <utility>

#include <kusari/core/array.h>
#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/device_elements.cuh>
#include <kusari/kernels/cuda/detail/streams.h>
#if defined(KUSARI_CUDA_EMULATION)
#include <kusari/kernels/cuda/detail/emulated_threads.h>
#endif

// Every index i below n that this thread visits in a grid-stride loop.
#define KUSARI_FOR_EACH_ELEMENT(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{blockDim.x} * gridDim.x)

namespace kusari::kernels::cuda {

// Launches `kernel` over grid × block threads on `stream` (no dynamic shared memory), its parameters
// converted from `args` (copied at the launch, as CUDA copies them); the host emulation queues it on the
// stream, to run when the host waits for that stream's work.
template <class... Params, class... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args&&... args) {
#if defined(KUSARI_CUDA_EMULATION)
  emulation::run_grid(reinterpret_cast<const void*>(kernel), grid, block, stream, [kernel, params = std::tuple<Params...>(std::forward<Args>(args)...)] {
    std::apply(kernel, params);
  });
#else
  kernel<<<grid, block, 0, stream>>>(std::forward<Args>(args)...);
#endif
}

// The device every operand is on; throws DeviceError naming `op` when one is elsewhere or the device
// does not exist.
template <size_t N>
int device_of(const std::array<const Array*, N>& arrays, const char* op) {
  const Device device = arrays[0]->device();
  require_device(device, op);
  for (const Array* a : arrays) {
    if (!(a->device() == device)) {
      throw DeviceError(cat(op, ": expected every operand on ", device, ", got one on ", a->device()));
    }
  }
  return device.index;
}

// Runs kernel(layout, args...) over every element of `arrays`, on their device's compute stream (nothing
// for empty arrays); the layout is the logical one (logical_kernel_layout) when `logical`.
template <size_t N, class... Args>
void run_elementwise(const char* op, const std::array<const Array*, N>& arrays, bool logical,
                     void (*kernel)(KernelLayout<N>, Args...), Args... args) {
  const int index = device_of<N>(arrays, op);
  if (arrays[0]->size() == 0) return;
  DeviceGuard guard(index);
  const KernelLayout<N> layout = logical ? logical_kernel_layout<N>(arrays, op) : kernel_layout<N>(arrays, op);
  launch_kernel(kernel, blocks_for(layout.size), kThreads, current_stream(index), layout, args...);
  check(cudaGetLastError(), op);
}

// run_elementwise for kernels whose elements are independent of their index (any order).
template <size_t N, class... Args>
void launch(const char* op, const std::array<const Array*, N>& arrays, void (*kernel)(KernelLayout<N>, Args...),
            std::type_identity_t<Args>... args) {
  run_elementwise<N, Args...>(op, arrays, false, kernel, args...);
}

// run_elementwise for kernels that read meaning into the index (row-major over the logical shape).
template <size_t N, class... Args>
void launch_in_logical_order(const char* op, const std::array<const Array*, N>& arrays,
                             void (*kernel)(KernelLayout<N>, Args...), std::type_identity_t<Args>... args) {
  run_elementwise<N, Args...>(op, arrays, true, kernel, args...);
}

}  // namespace kusari::kernels::cuda
