// CPU copy (with dtype conversion, vectorised for the half types) and fill kernels.

#include <immintrin.h>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/copy.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/kernels/cpu/detail/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

// Contiguous conversion; float <-> float16 goes through F16C eight lanes at a time where available.
template <class S, class D>
void convert_run(const S* src, D* dst, int64_t n) {
  int64_t i = 0;
#ifdef __F16C__
  if constexpr (std::is_same_v<S, float> && std::is_same_v<D, float16_t>) {
    for (; i + 8 <= n; i += 8) {
      const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
    }
  } else if constexpr (std::is_same_v<S, float16_t> && std::is_same_v<D, float>) {
    for (; i + 8 <= n; i += 8) {
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
    }
  }
#endif
  for (; i < n; ++i) dst[i] = convert<D>(src[i]);
}

void copy_kernel(const Array& src, const Array& dst) {
  visit_dtype(src.dtype(), [&]<class S>() {
    visit_dtype(dst.dtype(), [&]<class D>() {
      strided_loop<S, D>({&src, &dst}, [](std::tuple<S*, D*> p, const std::array<int64_t, 2>& s, int64_t n) {
        auto [in, out] = p;
        if (s[0] == 1 && s[1] == 1) {
          convert_run(in, out, n);
        } else {
          for (int64_t i = 0; i < n; ++i) out[i * s[1]] = convert<D>(in[i * s[0]]);
        }
      });
    });
  });
}

void fill_kernel(const Array& dst, double value) {
  visit_dtype(dst.dtype(), [&]<class T>() {
    const T v = store<T>(value);
    strided_loop<T>({&dst}, [v](std::tuple<T*> p, const std::array<int64_t, 1>& s, int64_t n) {
      T* out = std::get<0>(p);
      for (int64_t i = 0; i < n; ++i) out[i * s[0]] = v;
    });
  });
}

}  // namespace

void register_copy_kernels() {
  install_kernel<kernel_ops::Copy>(DeviceType::cpu, "cpu", copy_kernel);
  install_kernel<kernel_ops::Fill>(DeviceType::cpu, "cpu", fill_kernel);
}

}  // namespace kusari::kernels::cpu
