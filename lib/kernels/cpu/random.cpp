// CPU random fills: element i is a pure function of (seed, offset + i), whatever the thread count.

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/random.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/core/random.h>
#include <kusari/kernels/cpu/detail/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

void random_kernel(Distribution distribution, uint64_t seed, uint64_t offset, double p0, double p1, const Array& out) {
  const Array target = out.is_contiguous() ? out : Array::empty(out.shape(), out.dtype(), Device::cpu());
  visit_dtype(out.dtype(), [&]<class T>() {
    T* dst = static_cast<T*>(target.raw_data());
    auto draw_pair = [&](uint64_t pair) -> std::array<double, 2> {
      switch (distribution) {
        case Distribution::uniform: {
          const auto u = uniform_pair(seed, pair);
          return {p0 + (p1 - p0) * u[0], p0 + (p1 - p0) * u[1]};
        }
        case Distribution::normal: {
          const auto z = normal_pair(seed, pair);
          return {p0 + p1 * z[0], p0 + p1 * z[1]};
        }
        case Distribution::bernoulli: {
          const auto u = uniform_pair(seed, pair);
          return {u[0] < p0 ? 1.0 : 0.0, u[1] < p0 ? 1.0 : 0.0};
        }
      }
      return {0.0, 0.0};
    };
    auto put = [&](int64_t i, double v) {
      dst[i] = store<T>(v);
      // Rounding to T can reach `high` itself; keep the range half-open by mapping that draw to `low`.
      if (distribution == Distribution::uniform && p0 < p1 && static_cast<double>(load(dst[i])) >= p1) {
        dst[i] = store<T>(p0);
      }
    };
    parallel_for(target.size(), kGrain / 8, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end;) {
        const uint64_t index = offset + static_cast<uint64_t>(i);
        const auto values = draw_pair(index >> 1);
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
