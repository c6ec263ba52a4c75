// register_builtin_backends: the CPU backend's kernels, installed once, on the first dispatch or the
// first registration of another backend's kernel. An
// explicit call rather than static initializers, which a static link drops when nothing else in
// their object file is referenced.

#include <mutex>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cpu/detail/registration.h>

namespace kusari {

std::mutex& kernel_registration_mutex() {
  static std::mutex mutex;
  return mutex;
}

void register_builtin_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    kernels::cpu::register_channel_kernels();
    kernels::cpu::register_conv_kernels();
    kernels::cpu::register_copy_kernels();
    kernels::cpu::register_elementwise_kernels();
    kernels::cpu::register_gemm_kernels();
    kernels::cpu::register_pool_kernels();
    kernels::cpu::register_random_kernels();
    kernels::cpu::register_reduce_kernels();
    kernels::cpu::register_softmax_cross_entropy_kernels();
    kernels::cpu::register_top_k_kernels();
  });
}

}  // namespace kusari
