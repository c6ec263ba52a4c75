// CUDA random fills: element i (in row-major order of the logical shape, any strides) is draw offset + i
// of the stream, the number the CPU backend stores there (random_draw.h), whatever the grid; to the bit,
// but for float64 normals, whose log, sin and cos come from CUDA's libm (within a few units in the last
// place of glibc's).

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/detail/random_draw.h>
#include <kusari/kernels/ops/random.h>

namespace kusari::kernels::cuda {
namespace {

template <class T>
__global__ void random_elements(KernelLayout<1> layout, Distribution distribution, uint64_t seed, uint64_t offset,
                                double p0, double p1) {
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) {
    const uint64_t index = offset + static_cast<uint64_t>(i);
    const std::array<double, 2> pair = draw_pair(distribution, seed, index >> 1, p0, p1);
    T value = store<T>(pair[index & 1]);
    if (reached_high(distribution, static_cast<double>(load(value)), p0, p1)) value = store<T>(p0);
    element<T>(layout, 0, i) = value;
  }
}

void random_kernel(Distribution distribution, uint64_t seed, uint64_t offset, double p0, double p1, const Array& out) {
  visit_dtype(out.dtype(), [&]<class T>() {
    launch_in_logical_order<1>("random kernel", {&out}, random_elements<T>, distribution, seed, offset, p0, p1);
  });
}

}  // namespace

void register_random_kernels() { install_kernel<kernel_ops::Random>(DeviceType::cuda, "cuda", random_kernel); }

}  // namespace kusari::kernels::cuda
