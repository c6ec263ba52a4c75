// The random routine of layer_routines.h: one kernel call for the output's device.

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/layer_routines.h>

namespace kusari::ops {

void fill_random(const Array& out, Distribution distribution, uint64_t seed, uint64_t offset, double p0, double p1) {
  if (!out.defined()) throw ValueError("fill_random: the output is undefined");
  kernel_for<kernel_ops::Random>(out.device())(distribution, seed, offset, p0, p1, out);
}

}  // namespace kusari::ops
