// Installs the CUDA backend: its allocator, each area's kernels and the profiler's device tracer.

#include <kusari/core/allocator.h>
#include <kusari/kernels/cuda/detail/allocator.h>
#include <kusari/kernels/cuda/detail/registration.h>

namespace kusari::kernels::cuda {

void register_cuda_backend() {
  register_allocator(DeviceType::cuda, &cuda_allocator());
  register_copy_kernels();
  register_elementwise_kernels();
  register_reduction_kernels();
  register_linalg_kernels();
  register_random_kernels();
  register_loss_kernels();
  register_multi_tensor_kernels();
  register_normalization_kernels();
  register_batch_norm_kernels();
  register_batch_norm_statistics_kernels();
  register_pooling_kernels();
  register_convolution_kernels();
  register_profiler_tracer();
}

}  // namespace kusari::kernels::cuda
