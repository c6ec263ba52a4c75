#include <kusari/core/dtype.h>

#include <cfloat>
#include <cmath>
#include <ostream>

namespace kusari {

uint16_t half_bits_from_float_portable(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) {  // NaN: quiet it and keep the top of the payload
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  }
  if (abs >= 0x477ff000u) {  // inf, or rounds past the largest finite half
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (abs < 0x38800000u) {  // subnormal half (or zero): add a magic number so the FPU rounds
    float f;
    std::memcpy(&f, &abs, 4);
    f += 0.5f;
    uint32_t r;
    std::memcpy(&r, &f, 4);
    return static_cast<uint16_t>(sign | (r - 0x3f000000u));
  }
  const uint32_t mantissa_odd = (abs >> 13) & 1u;
  uint32_t r = abs + 0xc8000fffu + mantissa_odd;  // rebias exponent (-112 << 23) and round to even
  return static_cast<uint16_t>(sign | (r >> 13));
}

float float_from_half_bits_portable(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  uint32_t u;
  if (exponent == 0x1f) {
    u = sign | 0x7f800000u | (mantissa << 13) | (mantissa ? 0x400000u : 0u);
  } else if (exponent == 0) {
    float f = static_cast<float>(mantissa) * 5.9604644775390625e-08f;  // 2^-24
    std::memcpy(&u, &f, 4);
    u |= sign;
  } else {
    u = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float16_t::float16_t(double value) : float16_t(round_to_odd_float(value)) {}

float round_to_odd_float(double value) {
  constexpr double kFloatMax = FLT_MAX;
  if (std::isfinite(value) && std::fabs(value) > kFloatMax) {
    return static_cast<float>(std::copysign(kFloatMax, value));  // odd bit pattern: the round-to-odd result
  }
  float f = static_cast<float>(value);
  if (std::isnan(value) || static_cast<double>(f) == value) return f;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::fabs(static_cast<double>(f)) > std::fabs(value)) --u;  // truncate toward zero
  u |= 1u;
  std::memcpy(&f, &u, 4);
  return f;
}

size_t itemsize(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32: case Dtype::int32: return 4;
    case Dtype::float16: case Dtype::bfloat16: return 2;
    case Dtype::float64: case Dtype::int64: return 8;
    case Dtype::uint8: case Dtype::bool_: return 1;
  }
  throw DtypeError("itemsize: unknown dtype");
}

std::string dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32: return "float32";
    case Dtype::float16: return "float16";
    case Dtype::bfloat16: return "bfloat16";
    case Dtype::float64: return "float64";
    case Dtype::int32: return "int32";
    case Dtype::int64: return "int64";
    case Dtype::uint8: return "uint8";
    case Dtype::bool_: return "bool";
  }
  return "unknown";
}

Dtype dtype_from_name(const std::string& name) {
  for (Dtype d : {Dtype::float32, Dtype::float16, Dtype::bfloat16, Dtype::float64, Dtype::int32, Dtype::int64,
                  Dtype::uint8, Dtype::bool_}) {
    if (dtype_name(d) == name) return d;
  }
  throw DtypeError(cat("dtype_from_name: expected one of float32, float16, bfloat16, float64, int32, int64, uint8, "
                       "bool, got '", name, "'"));
}

bool is_floating(Dtype dtype) {
  return dtype == Dtype::float32 || dtype == Dtype::float16 || dtype == Dtype::bfloat16 || dtype == Dtype::float64;
}

namespace {
int rank_of(Dtype d) {
  switch (d) {
    case Dtype::bool_: return 0;
    case Dtype::uint8: return 1;
    case Dtype::int32: return 2;
    case Dtype::int64: return 3;
    case Dtype::float16: case Dtype::bfloat16: return 4;
    case Dtype::float32: return 5;
    case Dtype::float64: return 6;
  }
  return 0;
}
}  // namespace

Dtype promote_types(Dtype a, Dtype b) {
  if (a == b) return a;
  if ((a == Dtype::float16 && b == Dtype::bfloat16) || (a == Dtype::bfloat16 && b == Dtype::float16)) {
    return Dtype::float32;
  }
  return rank_of(a) >= rank_of(b) ? a : b;
}

std::ostream& operator<<(std::ostream& out, Dtype dtype) { return out << dtype_name(dtype); }

}  // namespace kusari
