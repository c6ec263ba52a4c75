// Wire-format loops: eight lanes at a time with AVX2 and F16C where the build targets them, one
// element at a time (with the same rounding) otherwise.

#include <kusari/distributed/detail/wire_format.h>

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace kusari::distributed::wire {
namespace {

#if defined(__AVX2__) && defined(__F16C__)
constexpr bool kVectorised = true;
// Outputs of at least this many floats bypass the cache when written.
constexpr int64_t kStreamingElements = 16384;

// Loads and stores eight wire elements as eight floats.
template <class W>
struct Lanes;

template <>
struct Lanes<float> {
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
};

template <>
struct Lanes<float16_t> {
  static __m256 load(const float16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static void store(float16_t* p, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
};

template <>
struct Lanes<bfloat16_t> {
  static __m256 load(const bfloat16_t* p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  // Rounds to nearest even as bfloat16_t(float) does; a NaN keeps its upper half, quieted.
  static void store(bfloat16_t* p, __m256 v) {
    const __m256i u = _mm256_castps_si256(v);
    const __m256i upper = _mm256_srli_epi32(u, 16);
    const __m256i bias = _mm256_add_epi32(_mm256_and_si256(upper, _mm256_set1_epi32(1)), _mm256_set1_epi32(0x7fff));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
    const __m256i quiet_nan = _mm256_or_si256(upper, _mm256_set1_epi32(0x40));
    const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i bits = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(bits, bits), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
};
#else
constexpr bool kVectorised = false;
#endif

// One wire element from a float, rounded to nearest even.
template <class W>
W to_wire(float value) {
  if constexpr (std::is_same_v<W, float>) {
    return value;
  } else {
    return W(value);
  }
}

// Runs vector(i) over blocks of eight elements and scalar(i) over the rest of [first, n).
template <class Vector, class Scalar>
void for_lanes(int64_t n, Vector vector, Scalar scalar, int64_t first = 0) {
  int64_t i = first;
  if constexpr (kVectorised) {
    for (; i + 8 <= n; i += 8) vector(i);
  }
  for (; i < n; ++i) scalar(i);
}

// Calls body.template operator()<W>() with the C++ type of a wire dtype.
template <class Body>
void visit_wire(Dtype wire, const char* op, Body&& body) {
  switch (wire) {
    case Dtype::float32: return body.template operator()<float>();
    case Dtype::float16: return body.template operator()<float16_t>();
    case Dtype::bfloat16: return body.template operator()<bfloat16_t>();
    default: check_wire_dtype(wire, op);
  }
}

}  // namespace

void check_wire_dtype(Dtype dtype, const char* op) {
  if (dtype != Dtype::float32 && dtype != Dtype::float16 && dtype != Dtype::bfloat16) {
    throw DtypeError(cat(op, ": expected a wire dtype of float32, float16 or bfloat16, got ", dtype));
  }
}

void pack(const float* src, int64_t n, float scale, Dtype wire, void* dst) {
  visit_wire(wire, "wire::pack", [&]<class W>() {
    W* out = static_cast<W*>(dst);
    for_lanes(
        n,
        [&](int64_t i) {
#if defined(__AVX2__) && defined(__F16C__)
          Lanes<W>::store(out + i, _mm256_mul_ps(_mm256_loadu_ps(src + i), _mm256_set1_ps(scale)));
#endif
        },
        [&](int64_t i) { out[i] = to_wire<W>(src[i] * scale); });
  });
}

void unpack(const void* src, Dtype wire, int64_t n, float scale, float* dst) {
  visit_wire(wire, "wire::unpack", [&]<class W>() {
    const W* in = static_cast<const W*>(src);
    int64_t first = 0;
#if defined(__AVX2__) && defined(__F16C__)
    const __m256 factor = _mm256_set1_ps(scale);
    // Results too large to stay in cache are written with streaming stores, which skip reading the
    // destination lines first (about twice as fast here for gradient-sized outputs).
    if (n >= kStreamingElements) {
      for (; first < n && reinterpret_cast<uintptr_t>(dst + first) % 32 != 0; ++first) {
        dst[first] = static_cast<float>(in[first]) * scale;
      }
      for (; first + 8 <= n; first += 8) {
        _mm256_stream_ps(dst + first, _mm256_mul_ps(Lanes<W>::load(in + first), factor));
      }
      _mm_sfence();
    }
#endif
    for_lanes(
        n,
        [&](int64_t i) {
#if defined(__AVX2__) && defined(__F16C__)
          _mm256_storeu_ps(dst + i, _mm256_mul_ps(Lanes<W>::load(in + i), factor));
#endif
        },
        [&](int64_t i) { dst[i] = static_cast<float>(in[i]) * scale; }, first);
  });
}

void accumulate(const float* src, int64_t n, float scale, Dtype wire, void* inout) {
  visit_wire(wire, "wire::accumulate", [&]<class W>() {
    W* acc = static_cast<W*>(inout);
    for_lanes(
        n,
        [&](int64_t i) {
#if defined(__AVX2__) && defined(__F16C__)
          const __m256 contribution = _mm256_mul_ps(_mm256_loadu_ps(src + i), _mm256_set1_ps(scale));
          Lanes<W>::store(acc + i, _mm256_add_ps(Lanes<W>::load(acc + i), contribution));
#endif
        },
        [&](int64_t i) { acc[i] = to_wire<W>(static_cast<float>(acc[i]) + src[i] * scale); });
  });
}

void add(const void* in, Dtype wire, int64_t n, void* inout) {
  visit_wire(wire, "wire::add", [&]<class W>() {
    const W* a = static_cast<const W*>(in);
    W* acc = static_cast<W*>(inout);
    for_lanes(
        n,
        [&](int64_t i) {
#if defined(__AVX2__) && defined(__F16C__)
          Lanes<W>::store(acc + i, _mm256_add_ps(Lanes<W>::load(a + i), Lanes<W>::load(acc + i)));
#endif
        },
        [&](int64_t i) { acc[i] = to_wire<W>(static_cast<float>(a[i]) + static_cast<float>(acc[i])); });
  });
}

float max_abs(const float* src, int64_t n) {
  float largest = 0;
  bool finite = true;
  int64_t first = 0;
#if defined(__AVX2__) && defined(__F16C__)
  const __m256 magnitude_bits = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 infinity = _mm256_set1_ps(INFINITY);
  __m256 lanes = _mm256_setzero_ps();
  __m256 bad = _mm256_setzero_ps();  // lanes that met an inf or NaN (|x| >= inf fails for NaN: ordered test)
  for (; first + 8 <= n; first += 8) {
    const __m256 a = _mm256_and_ps(_mm256_loadu_ps(src + first), magnitude_bits);
    lanes = _mm256_max_ps(lanes, a);
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(a, infinity, _CMP_NLT_UQ));
  }
  alignas(32) float out[8];
  _mm256_store_ps(out, lanes);
  for (float v : out) largest = std::max(largest, v);
  finite = _mm256_movemask_ps(bad) == 0;
#endif
  for (int64_t i = first; i < n; ++i) {
    const float a = std::fabs(src[i]);
    if (!(a < INFINITY)) finite = false;
    largest = std::max(largest, a);
  }
  return finite ? largest : INFINITY;
}

}  // namespace kusari::distributed::wire
