// Dtype properties and the float16/bfloat16 conversions, scalar and vectorised (F16C) alike.

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <kusari/kernels/detail/element_conversion.h>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

const std::vector<Dtype> kAllDtypes = {Dtype::float32, Dtype::float16, Dtype::bfloat16, Dtype::float64,
                                       Dtype::int32,   Dtype::int64,   Dtype::uint8,    Dtype::bool_};

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint32_t bits_of(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

uint16_t half_bits(float f) { return float16_t(f).bits; }
uint16_t half_bits(double d) { return float16_t(d).bits; }
uint16_t bf16_bits(float f) { return bfloat16_t(f).bits; }
uint16_t bf16_bits(double d) { return bfloat16_t(d).bits; }

float widen_half(uint16_t bits) {
  float16_t h;
  h.bits = bits;
  return static_cast<float>(h);
}

float widen_bf16(uint16_t bits) {
  bfloat16_t b;
  b.bits = bits;
  return static_cast<float>(b);
}

bool is_half_nan(uint16_t bits) { return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0; }

// binary16 decoded from its fields with ldexp, independently of float16_t (NaNs excluded).
double decode_half(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
  if (exponent == 0x1f) return sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// The float16 bit patterns of `values` as computed by Array::astype (F16C eight lanes at a time).
std::vector<uint16_t> astype_half_bits(const std::vector<float>& values) {
  const std::vector<float16_t> halves =
      Array::from_vector(values, Shape{static_cast<int64_t>(values.size())}).astype(Dtype::float16).to_vector<float16_t>();
  std::vector<uint16_t> bits;
  for (float16_t h : halves) bits.push_back(h.bits);
  return bits;
}

// Every float16 bit pattern, in order.
std::vector<float16_t> all_halves() {
  std::vector<float16_t> halves(65536);
  for (uint32_t b = 0; b < 65536; ++b) halves[b].bits = static_cast<uint16_t>(b);
  return halves;
}

}  // namespace

TEST_CASE("itemsize, names and is_floating cover every dtype") {
  CHECK(itemsize(Dtype::float32) == 4);
  CHECK(itemsize(Dtype::float16) == 2);
  CHECK(itemsize(Dtype::bfloat16) == 2);
  CHECK(itemsize(Dtype::float64) == 8);
  CHECK(itemsize(Dtype::int32) == 4);
  CHECK(itemsize(Dtype::int64) == 8);
  CHECK(itemsize(Dtype::uint8) == 1);
  CHECK(itemsize(Dtype::bool_) == 1);
  CHECK(dtype_name(Dtype::bool_) == "bool");
  CHECK(dtype_name(Dtype::bfloat16) == "bfloat16");
  for (Dtype d : kAllDtypes) {
    CHECK(dtype_from_name(dtype_name(d)) == d);
    CHECK(cat(d) == dtype_name(d));
    const bool floating = d == Dtype::float32 || d == Dtype::float16 || d == Dtype::bfloat16 || d == Dtype::float64;
    CHECK(is_floating(d) == floating);
  }
  expect_error<DtypeError>([] { dtype_from_name("float8"); }, {"dtype_from_name", "float32", "'float8'"});
}

TEST_CASE("promote_types follows NumPy's ordering and sends float16 with bfloat16 to float32") {
  for (Dtype a : kAllDtypes) {
    CHECK(promote_types(a, a) == a);
    for (Dtype b : kAllDtypes) CHECK(promote_types(a, b) == promote_types(b, a));
  }
  CHECK(promote_types(Dtype::bool_, Dtype::uint8) == Dtype::uint8);
  CHECK(promote_types(Dtype::uint8, Dtype::int32) == Dtype::int32);
  CHECK(promote_types(Dtype::int32, Dtype::int64) == Dtype::int64);
  CHECK(promote_types(Dtype::int64, Dtype::float16) == Dtype::float16);
  CHECK(promote_types(Dtype::int64, Dtype::bfloat16) == Dtype::bfloat16);
  CHECK(promote_types(Dtype::float16, Dtype::bfloat16) == Dtype::float32);
  CHECK(promote_types(Dtype::float16, Dtype::float32) == Dtype::float32);
  CHECK(promote_types(Dtype::bfloat16, Dtype::float64) == Dtype::float64);
  CHECK(promote_types(Dtype::float32, Dtype::float64) == Dtype::float64);
  CHECK(promote_types(Dtype::bool_, Dtype::float32) == Dtype::float32);
}

TEST_CASE("float16 rounds to nearest, ties to even") {
  CHECK(half_bits(1.0f) == 0x3c00);
  CHECK(half_bits(-2.0f) == 0xc000);
  CHECK(half_bits(0.1f) == 0x2e66);
  CHECK(half_bits(1.0f + 0x1p-11f) == 0x3c00);               // tie, even stays
  CHECK(half_bits(1.0f + 3 * 0x1p-11f) == 0x3c02);           // tie, odd rounds up
  CHECK(half_bits(std::nextafter(1.0f + 0x1p-11f, 2.0f)) == 0x3c01);
  CHECK(half_bits(std::nextafter(1.0f + 3 * 0x1p-11f, 0.0f)) == 0x3c01);
  CHECK(half_bits(2048.0f + 1.0f) == 0x6800);                // 2049 ties to 2048
  CHECK(half_bits(2048.0f + 3.0f) == 0x6802);                // 2051 ties to 2052
}

TEST_CASE("float16 subnormals, signed zero, overflow and NaN") {
  CHECK(half_bits(0.0f) == 0x0000);
  CHECK(half_bits(-0.0f) == 0x8000);
  CHECK(half_bits(0x1p-24f) == 0x0001);                       // smallest subnormal
  CHECK(half_bits(-0x1p-24f) == 0x8001);
  CHECK(half_bits(0x1p-25f) == 0x0000);                       // half of it ties to zero
  CHECK(half_bits(-0x1p-25f) == 0x8000);
  CHECK(half_bits(std::nextafter(0x1p-25f, 1.0f)) == 0x0001);
  CHECK(half_bits(3 * 0x1p-25f) == 0x0002);                   // 1.5 ulp ties to even 2
  CHECK(half_bits(1023 * 0x1p-24f) == 0x03ff);                // largest subnormal
  CHECK(half_bits(0x1p-14f) == 0x0400);                       // smallest normal
  CHECK(half_bits(0x1p-14f - 0x1p-25f) == 0x0400);            // ties up to the smallest normal (even)
  CHECK(half_bits(1e-45f) == 0x0000);                         // float subnormal
  CHECK(half_bits(65504.0f) == 0x7bff);                       // largest finite
  CHECK(half_bits(65519.99f) == 0x7bff);
  CHECK(half_bits(65520.0f) == 0x7c00);                       // halfway to 65536 overflows
  CHECK(half_bits(-65520.0f) == 0xfc00);
  CHECK(half_bits(FLT_MAX) == 0x7c00);
  CHECK(half_bits(INFINITY) == 0x7c00);
  CHECK(half_bits(-INFINITY) == 0xfc00);
  const uint16_t nan = half_bits(std::numeric_limits<float>::quiet_NaN());
  CHECK(is_half_nan(nan));
  CHECK(is_half_nan(half_bits(-std::numeric_limits<float>::quiet_NaN())));
  CHECK((half_bits(-std::numeric_limits<float>::quiet_NaN()) & 0x8000) == 0x8000);
  CHECK(is_half_nan(half_bits(from_bits(0x7f800001u))));     // a signalling NaN with a low payload stays NaN
  CHECK(std::isnan(widen_half(0x7c01)));
  CHECK(widen_half(0x7c00) == INFINITY);
  CHECK(widen_half(0xfc00) == -INFINITY);
  CHECK(std::signbit(widen_half(0x8000)));
}

TEST_CASE("float16 widening is exact for all 65536 bit patterns") {
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    if (is_half_nan(bits)) {
      CHECK(std::isnan(widen_half(bits)));
      continue;
    }
    if (static_cast<double>(widen_half(bits)) != decode_half(bits)) FAIL_CHECK("pattern ", b);
  }
}

TEST_CASE("float16 round-trips half -> float -> half for all 65536 patterns, scalar and F16C alike") {
  const std::vector<float16_t> halves = all_halves();
  std::vector<float> widened;
  for (float16_t h : halves) widened.push_back(static_cast<float>(h));
  const std::vector<uint16_t> vectorised = astype_half_bits(widened);
  const std::vector<float> vector_widened =
      Array::from_vector(halves, Shape{65536}).astype(Dtype::float32).to_vector<float>();
  int64_t mismatches = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    // NaNs come back quieted (payload kept), as F16C does.
    const uint16_t expected = is_half_nan(bits) ? static_cast<uint16_t>(bits | 0x200) : bits;
    const bool ok = half_bits(widened[b]) == expected && vectorised[b] == expected &&
                    bits_of(vector_widened[b]) == bits_of(widened[b]);
    if (!ok && ++mismatches <= 5) FAIL_CHECK("pattern ", b);
  }
  CHECK(mismatches == 0);
}

TEST_CASE("float -> float16 agrees bit for bit between the scalar path and F16C") {
  std::vector<float> values;
  // Every finite half, its neighbours' midpoints and the floats just around those midpoints (both signs).
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    const float h = widen_half(static_cast<uint16_t>(b));
    const float midpoint = (h + widen_half(static_cast<uint16_t>(b + 1))) / 2;  // exact in float
    for (float v : {h, midpoint, std::nextafter(midpoint, 0.0f), std::nextafter(midpoint, INFINITY)}) {
      values.push_back(v);
      values.push_back(-v);
    }
  }
  // A sweep over all float exponents and many mantissas, plus the specials.
  for (uint64_t b = 0; b < (1ull << 32); b += 4099) values.push_back(from_bits(static_cast<uint32_t>(b)));
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, FLT_MIN, 1e-45f, 65520.0f, 65519.996f,
                  from_bits(0x7fc00000u), from_bits(0xffc00001u), from_bits(0x7f800001u), from_bits(0x7fbfffffu)}) {
    values.push_back(v);
  }
  const std::vector<uint16_t> vectorised = astype_half_bits(values);
  int64_t mismatches = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (vectorised[i] != half_bits(values[i]) && ++mismatches <= 5) {
      FAIL_CHECK("float bits ", bits_of(values[i]), ": F16C ", vectorised[i], ", scalar ", half_bits(values[i]));
    }
  }
  CHECK(values.size() > 1000000);
  CHECK(mismatches == 0);
}

TEST_CASE("double -> float16 rounds once, not through float") {
  const double above_tie = 1.0 + 0x1p-11 + 0x1p-40;  // rounds to float as the tie 1 + 2^-11 itself
  CHECK(half_bits(above_tie) == 0x3c01);
  CHECK(half_bits(-above_tie) == 0xbc01);
  CHECK(half_bits(1.0 + 0x1p-11) == 0x3c00);
  CHECK(half_bits(0x1p-25 + 0x1p-60) == 0x0001);
  CHECK(half_bits(65520.0 - 0x1p-30) == 0x7bff);
  CHECK(half_bits(1e300) == 0x7c00);
  CHECK(half_bits(-1e300) == 0xfc00);
  CHECK(is_half_nan(half_bits(std::numeric_limits<double>::quiet_NaN())));
  // Arrays convert the same way: from_vector, astype and fill all round once.
  const Array from_doubles = Array::from_vector<double>({above_tie, 1.0 + 0x1p-11}, {2}, Dtype::float16);
  const std::vector<float16_t> h = from_doubles.to_vector<float16_t>();
  CHECK(h[0].bits == 0x3c01);
  CHECK(h[1].bits == 0x3c00);
  CHECK(Array::full({3}, above_tie, Dtype::float16).to_vector<float16_t>()[2].bits == 0x3c01);
  CHECK(Array::full({1}, above_tie).astype(Dtype::float64).item<double>() == static_cast<float>(above_tie));
  CHECK(Array::from_vector<double>({above_tie}, {1}).astype(Dtype::float16).to_vector<float16_t>()[0].bits == 0x3c01);
}

TEST_CASE("round_to_odd_float keeps exact values and marks inexact ones odd") {
  CHECK(round_to_odd_float(1.5) == 1.5f);
  CHECK(round_to_odd_float(-0.0) == 0.0f);
  CHECK(std::signbit(round_to_odd_float(-0.0)));
  CHECK(bits_of(round_to_odd_float(1.0 + 0x1p-30)) == 0x3f800001u);
  CHECK(bits_of(round_to_odd_float(std::nextafter(2.0, 0.0))) == 0x3fffffffu);  // truncated, then odd
  CHECK(bits_of(round_to_odd_float(-(1.0 + 0x1p-30))) == 0xbf800001u);
  CHECK(round_to_odd_float(1e300) == FLT_MAX);
  CHECK(round_to_odd_float(-1e300) == -FLT_MAX);
  CHECK(round_to_odd_float(INFINITY) == INFINITY);
  CHECK(std::isnan(round_to_odd_float(NAN)));
  CHECK(bits_of(round_to_odd_float(1e-50)) == 0x00000001u);
}

TEST_CASE("bfloat16 rounds to nearest even and widens exactly") {
  CHECK(bf16_bits(1.0f) == 0x3f80);
  CHECK(bf16_bits(-2.0f) == 0xc000);
  CHECK(bf16_bits(1.0f + 0x1p-8f) == 0x3f80);                // tie, even stays
  CHECK(bf16_bits(1.0f + 3 * 0x1p-8f) == 0x3f82);            // tie, odd rounds up
  CHECK(bf16_bits(std::nextafter(1.0f + 0x1p-8f, 2.0f)) == 0x3f81);
  CHECK(bf16_bits(1.0 + 0x1p-8 + 0x1p-40) == 0x3f81);        // from double: one rounding
  CHECK(bf16_bits(0.0f) == 0x0000);
  CHECK(bf16_bits(-0.0f) == 0x8000);
  CHECK(bf16_bits(0x1p-133f) == 0x0001);                     // smallest subnormal
  CHECK(bf16_bits(0x1p-134f) == 0x0000);                     // ties to zero
  CHECK(bf16_bits(3 * 0x1p-134f) == 0x0002);
  CHECK(bf16_bits(widen_bf16(0x7f7f)) == 0x7f7f);            // largest finite
  CHECK(bf16_bits(FLT_MAX) == 0x7f80);                       // rounds past it: inf
  CHECK(bf16_bits(-FLT_MAX) == 0xff80);
  CHECK(bf16_bits(INFINITY) == 0x7f80);
  CHECK(bf16_bits(1e300) == 0x7f80);
  const uint16_t nan = bf16_bits(from_bits(0x7f800001u));    // NaN whose payload sits below bfloat16's bits
  CHECK((nan & 0x7f80) == 0x7f80);
  CHECK((nan & 0x7f) != 0);
  CHECK((bf16_bits(-std::numeric_limits<float>::quiet_NaN()) & 0x8000) == 0x8000);
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    if (bits_of(widen_bf16(bits)) != b << 16) FAIL_CHECK("widening pattern ", b);
    const bool nan_pattern = (bits & 0x7f80) == 0x7f80 && (bits & 0x7f) != 0;
    const uint16_t expected = nan_pattern ? static_cast<uint16_t>(bits | 0x40) : bits;
    if (bf16_bits(widen_bf16(bits)) != expected) FAIL_CHECK("round trip of pattern ", b);
  }
}

TEST_CASE("visit_dtype maps each dtype to its C++ type and visit_floating_dtype rejects integers") {
  for (Dtype d : kAllDtypes) {
    CHECK(visit_dtype(d, []<class T>() { return dtype_of<T>(); }) == d);
  }
  CHECK(visit_floating_dtype(Dtype::bfloat16, "op", []<class T>() { return sizeof(T); }) == 2);
  expect_error<DtypeError>([] { visit_floating_dtype(Dtype::int32, "myop", []<class T>() { return 0; }); },
                           {"myop", "floating", "int32"});
}

TEST_CASE("the portable float16 conversions give the same bits as the inline ones") {
  // Programs built without the library's -march take the portable path; both must agree bit for bit.
  const auto bits_of = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  int64_t mismatches = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto half = static_cast<uint16_t>(h);
    mismatches += bits_of(float_from_half_bits(half)) != bits_of(float_from_half_bits_portable(half));
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4093) {
    float f;
    const auto pattern = static_cast<uint32_t>(u);
    std::memcpy(&f, &pattern, 4);
    mismatches += half_bits_from_float(f) != half_bits_from_float_portable(f);
  }
  CHECK(mismatches == 0);
}

namespace {

// The bits of element 0 of a one-element array of T.
template <class T>
kernels::bits_t<T> first_bits(const Array& a) {
  kernels::bits_t<T> bits;
  std::memcpy(&bits, a.contiguous().host_data(), sizeof(T));
  return bits;
}

// A one-element array of S holding these bits.
template <class S>
Array array_of_bits(kernels::bits_t<S> bits) {
  const Array a = Array::empty({1}, dtype_of<S>());
  std::memcpy(a.raw_data(), &bits, sizeof(S));
  return a;
}

}  // namespace

TEST_CASE("a NaN converts between floating dtypes as nan_bits says, the rule the CUDA kernels follow") {
  // Quiet and signaling NaNs, both signs, payloads in the fraction's top and bottom bits.
  const std::vector<uint64_t> doubles = {0x7ff8000000000000, 0xfff8000000012345, 0x7ff4000000000001,
                                         0x7ffc0a0b0c0d0e0f, 0xfff0000000000001};
  const std::vector<uint32_t> floats = {0x7fc00000, 0xffc00001, 0x7fa00000, 0x7f800001, 0xffd5aa55};
  const std::vector<uint16_t> halves = {0x7e00, 0xfe01, 0x7d00, 0x7c01, 0xfdaa};
  const std::vector<uint16_t> bfloats = {0x7fc0, 0xffc1, 0x7fa0, 0x7f81, 0xffd5};
  const auto check_from = [&]<class S>(const auto& patterns) {
    for (const auto bits : patterns) {
      const Array nan = array_of_bits<S>(static_cast<kernels::bits_t<S>>(bits));
      for (const Dtype to : {Dtype::float64, Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
        if (to == dtype_of<S>()) continue;
        visit_floating_dtype(to, "test", [&]<class D>() {
          INFO("from ", dtype_of<S>(), " bits ", bits, " to ", to);
          // bfloat16 widens to float by its bits alone, a signaling NaN staying signaling.
          const auto expected = std::is_same_v<S, bfloat16_t> && std::is_same_v<D, float>
                                    ? static_cast<kernels::bits_t<D>>(static_cast<uint32_t>(bits) << 16)
                                    : kernels::nan_bits<D, S>(static_cast<kernels::bits_t<S>>(bits));
          CHECK(first_bits<D>(nan.astype(to)) == expected);
        });
      }
    }
  };
  check_from.operator()<double>(doubles);
  check_from.operator()<float>(floats);
  check_from.operator()<float16_t>(halves);
  check_from.operator()<bfloat16_t>(bfloats);
}
