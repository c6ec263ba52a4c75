// CPU random fills: element i is a pure function of (seed, offset + i), whatever the thread count.

#include <kusari/core/kernel_table.h>
#include <kusari/core/random.h>
#include <kusari/kernels/cpu/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

void random_kernel(Distribution distribution, uint64_t seed, uint64_t offset, double p0, double p1, const Array& out) {
  const Array target = out.is_contiguous() ? out : Array::empty(out.shape(), out.dtype());
  visit_dtype(out.dtype(), [&]<class T>() {
    T* dst = static_cast<T*>(target.raw_data());
    parallel_for(target.size(), kGrain / 8, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const uint64_t index = offset + static_cast<uint64_t>(i);
        double v = 0;
        switch (distribution) {
          case Distribution::uniform: v = p0 + (p1 - p0) * uniform_at(seed, index); break;
          case Distribution::normal: v = p0 + p1 * normal_at(seed, index); break;
          case Distribution::bernoulli: v = uniform_at(seed, index) < p0 ? 1.0 : 0.0; break;
        }
        dst[i] = store<T>(v);
        // Rounding to T can reach `high` itself; keep the range half-open by mapping that draw to `low`.
        if (distribution == Distribution::uniform && p0 < p1 && static_cast<double>(load(dst[i])) >= p1) {
          dst[i] = store<T>(p0);
        }
      }
    });
  });
  if (!out.is_contiguous()) out.assign(target);
}

const bool registered = [] {
  register_kernel<kernel_ops::Random>(DeviceType::cpu, random_kernel);
  return true;
}();

}  // namespace
}  // namespace kusari::kernels::cpu
