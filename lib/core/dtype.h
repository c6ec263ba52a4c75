#pragma once
// Element types of arrays, the half-precision scalar types, and dispatch from a Dtype to a C++ type.

#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <string>

#include <kusari/core/api.h>
#include <kusari/core/error.h>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace kusari {

// binary16 bits from a float, rounded to nearest (ties to even), a NaN quieted keeping the top of its
// payload, in portable code (dtype.cpp; always in the library, whatever -march it was built for).
KUSARI_API uint16_t half_bits_from_float_portable(float value);
// The float a binary16 pattern stands for (exact), in portable code (dtype.cpp).
KUSARI_API float float_from_half_bits_portable(uint16_t bits);
// The same two conversions: F16C instructions where this translation unit targets them (inline, so
// elementwise loops vectorise), else the portable code, so a program built without the library's
// -march still links and gets the same bits.
#if defined(__F16C__)
inline uint16_t half_bits_from_float(float value) { return static_cast<uint16_t>(_cvtss_sh(value, 0)); }
inline float float_from_half_bits(uint16_t bits) { return _cvtsh_ss(bits); }
#else
inline uint16_t half_bits_from_float(float value) { return half_bits_from_float_portable(value); }
inline float float_from_half_bits(uint16_t bits) { return float_from_half_bits_portable(bits); }
#endif

// The element type of an Array.
enum class Dtype : uint8_t { float32, float16, bfloat16, float64, int32, int64, uint8, bool_ };

// IEEE 754 binary16 stored as its bit pattern; arithmetic happens in float.
struct KUSARI_API float16_t {
  uint16_t bits = 0;
  float16_t() = default;
  // Rounds a float to the nearest binary16 (ties to even); a NaN stays NaN, quieted, as F16C does.
  explicit float16_t(float value) : bits(half_bits_from_float(value)) {}
  // Rounds a double to the nearest binary16 in one step (no double rounding through float).
  explicit float16_t(double value);
  // Widens to float exactly (a NaN is quieted, as F16C does).
  operator float() const { return float_from_half_bits(bits); }
};

// Narrows a double to float rounding to odd (inexact results get their last bit set), so that a
// second rounding to a type of at most 22 significant bits equals one direct rounding.
KUSARI_API float round_to_odd_float(double value);

// bfloat16 (the upper half of a binary32) stored as its bit pattern; arithmetic happens in float.
struct KUSARI_API bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  // Rounds a float to the nearest bfloat16 (ties to even, NaN stays NaN).
  explicit bfloat16_t(float value) {
    uint32_t u;
    std::memcpy(&u, &value, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = static_cast<uint16_t>((u >> 16) | 0x40);
    } else {
      bits = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
  }
  // Rounds a double to the nearest bfloat16 in one step (no double rounding through float).
  explicit bfloat16_t(double value) : bfloat16_t(round_to_odd_float(value)) {}
  // Widens to float exactly.
  operator float() const {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

// Bytes per element.
KUSARI_API size_t itemsize(Dtype dtype);
// The NumPy-style name ("float32", "bool", ...).
KUSARI_API std::string dtype_name(Dtype dtype);
// Parses a NumPy-style name; throws DtypeError for an unknown one.
KUSARI_API Dtype dtype_from_name(const std::string& name);
// True for float16, bfloat16, float32 and float64.
KUSARI_API bool is_floating(Dtype dtype);
// The dtype two operands are computed in (NumPy's promotion, with float16+bfloat16 -> float32).
KUSARI_API Dtype promote_types(Dtype a, Dtype b);
// Prints the dtype name.
KUSARI_API std::ostream& operator<<(std::ostream& out, Dtype dtype);

// Maps a C++ element type to its Dtype.
template <class T>
constexpr Dtype dtype_of();
template <> constexpr Dtype dtype_of<float>() { return Dtype::float32; }
template <> constexpr Dtype dtype_of<float16_t>() { return Dtype::float16; }
template <> constexpr Dtype dtype_of<bfloat16_t>() { return Dtype::bfloat16; }
template <> constexpr Dtype dtype_of<double>() { return Dtype::float64; }
template <> constexpr Dtype dtype_of<int32_t>() { return Dtype::int32; }
template <> constexpr Dtype dtype_of<int64_t>() { return Dtype::int64; }
template <> constexpr Dtype dtype_of<uint8_t>() { return Dtype::uint8; }
template <> constexpr Dtype dtype_of<bool>() { return Dtype::bool_; }

// The type arithmetic on T is carried out in (float for the half types, T otherwise).
template <class T>
using compute_type_t = std::conditional_t<std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>, float, T>;

// Calls visitor.template operator()<T>() with the C++ type of dtype.
template <class Visitor>
decltype(auto) visit_dtype(Dtype dtype, Visitor&& visitor) {
  switch (dtype) {
    case Dtype::float32: return visitor.template operator()<float>();
    case Dtype::float16: return visitor.template operator()<float16_t>();
    case Dtype::bfloat16: return visitor.template operator()<bfloat16_t>();
    case Dtype::float64: return visitor.template operator()<double>();
    case Dtype::int32: return visitor.template operator()<int32_t>();
    case Dtype::int64: return visitor.template operator()<int64_t>();
    case Dtype::uint8: return visitor.template operator()<uint8_t>();
    case Dtype::bool_: return visitor.template operator()<bool>();
  }
  throw DtypeError("visit_dtype: unknown dtype");
}

// Like visit_dtype, restricted to the four floating dtypes; throws DtypeError naming `op` otherwise.
template <class Visitor>
decltype(auto) visit_floating_dtype(Dtype dtype, const char* op, Visitor&& visitor) {
  switch (dtype) {
    case Dtype::float32: return visitor.template operator()<float>();
    case Dtype::float16: return visitor.template operator()<float16_t>();
    case Dtype::bfloat16: return visitor.template operator()<bfloat16_t>();
    case Dtype::float64: return visitor.template operator()<double>();
    default: break;
  }
  throw DtypeError(cat(op, ": expected a floating dtype, got ", dtype_name(dtype)));
}

}  // namespace kusari
