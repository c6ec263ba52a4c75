// The CPU's multi-tensor optimizer kernels: the per-tensor routines, one tensor after another, so that
// a group's update equals each parameter's own to the bit.

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/kernels/optimizer_routines.h>

namespace kusari::kernels::cpu {

void register_optimizer_kernels() {
  install_kernel<kernel_ops::MomentumSteps>(DeviceType::cpu, "cpu", ops::detail::momentum_steps_one_by_one);
  install_kernel<kernel_ops::SquaredNorms>(DeviceType::cpu, "cpu", ops::detail::squared_norms_one_by_one);
  install_kernel<kernel_ops::CopyTensors>(DeviceType::cpu, "cpu", ops::detail::copy_tensors_one_by_one);
  install_kernel<kernel_ops::AddScaledTensors>(DeviceType::cpu, "cpu", ops::detail::add_scaled_tensors_one_by_one);
  install_kernel<kernel_ops::AllFinite>(DeviceType::cpu, "cpu", ops::detail::all_finite_scan);
}

}  // namespace kusari::kernels::cpu
