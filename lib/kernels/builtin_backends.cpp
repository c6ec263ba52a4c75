// register_builtin_backends: the kernels of the CPU and loopback backends (and CUDA's in a build with it), installed once, on the first
// dispatch, allocation on a device other than the host or registration of another backend's kernel.
// An explicit call rather than static initializers, which a static link drops when nothing else in
// their object file is referenced. A backend's registration only installs pointers: allocating on a
// device from inside it would re-enter this once-call (allocator_for calls it for a missing allocator).

#include <mutex>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/kernels/loopback/detail/registration.h>
#ifdef KUSARI_WITH_CUDA
#include <kusari/kernels/cuda/detail/registration.h>
#endif

namespace kusari {

std::mutex& kernel_registration_mutex() {
  static std::mutex mutex;
  return mutex;
}

void register_builtin_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    kernels::cpu::register_convolution_kernels();
    kernels::cpu::register_copy_kernels();
    kernels::cpu::register_elementwise_kernels();
    kernels::cpu::register_linalg_kernels();
    kernels::cpu::register_loss_kernels();
    kernels::cpu::register_normalization_kernels();
    kernels::cpu::register_optimizer_kernels();
    kernels::cpu::register_pooling_kernels();
    kernels::cpu::register_random_kernels();
    kernels::cpu::register_reduction_kernels();
    kernels::loopback::register_loopback_backend();
#ifdef KUSARI_WITH_CUDA
    kernels::cuda::register_cuda_backend();
#endif
  });
}

}  // namespace kusari
