// CPU random fills: element i is a pure function of (seed, offset + i), whatever the thread count, by
// the draws both backends share (random_draw.h).

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/kernels/cpu/detail/strided_loop.h>
#include <kusari/kernels/detail/random_draw.h>
#include <kusari/kernels/ops/random.h>

namespace kusari::kernels::cpu {
namespace {

void random_kernel(Distribution distribution, uint64_t seed, uint64_t offset, double p0, double p1, const Array& out) {
  const Array target = out.is_contiguous() ? out : Array::empty(out.shape(), out.dtype(), Device::cpu());
  visit_dtype(out.dtype(), [&]<class T>() {
    T* dst = static_cast<T*>(target.raw_data());
    auto put = [&](int64_t i, double v) {
      dst[i] = store<T>(v);
      if (reached_high(distribution, static_cast<double>(load(dst[i])), p0, p1)) dst[i] = store<T>(p0);
    };
    parallel_for(target.size(), kGrain / 8, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end;) {
        const uint64_t index = offset + static_cast<uint64_t>(i);
        const auto values = draw_pair(distribution, seed, index >> 1, p0, p1);
        const int64_t first = static_cast<int64_t>(index & 1);
        for (int64_t k = first; k < 2 && i < end; ++k, ++i) put(i, values[static_cast<size_t>(k)]);
      }
    });
  });
  if (!out.is_contiguous()) out.assign(target);
}

}  // namespace

void register_random_kernels() {
  install_kernel<kernel_ops::Random>(DeviceType::cpu, "cpu", random_kernel);
}

}  // namespace kusari::kernels::cpu
