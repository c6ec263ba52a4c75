#pragma once
// Internal to the backends, and compiled for the host and (under nvcc) for the device: the rules both
// backends follow where C++ leaves a conversion undefined, so that an array converts to the same bits
// on every device. A floating value becomes an integer by truncation toward zero, saturated to the
// integer's range, NaN becoming 0 (the rule of Rust's `as`, Java and CUDA's own cvt.rzi.sat). A NaN
// converts between floating types as x86 converts it.

#include <cstdint>
#include <limits>
#include <type_traits>

#include <kusari/core/detail/host_device.h>
#include <kusari/core/dtype.h>

namespace kusari::kernels {

// value (float or double) as the integer type I: truncated toward zero, clamped to I's range, 0 for NaN.
template <class I, class F>
KUSARI_HOST_DEVICE constexpr I integer_from_floating(F value) {
  static_assert(std::is_integral_v<I> && !std::is_same_v<I, bool> && std::is_floating_point_v<F>);
  if (!(value == value)) return I(0);
  // The range's ends as F: the lowest is a power of two (or 0), exact; for the highest, compare against
  // 2^digits, which is exact where max() itself may round up (int64's 2^63 - 1 as a double is 2^63).
  constexpr F lowest = static_cast<F>(std::numeric_limits<I>::lowest());
  constexpr F above_highest = static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * F(2);
  if (value <= lowest) return std::numeric_limits<I>::lowest();
  if (value >= above_highest) return std::numeric_limits<I>::max();
  return static_cast<I>(value);
}

// A floating type's bits as an unsigned integer of its width.
template <class T>
using bits_t = std::conditional_t<sizeof(T) == 8, uint64_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>>;

// Where a floating type's sign and fraction sit: (sign shift, fraction bits, exponent mask).
template <class T>
struct FloatFormat;
template <>
struct FloatFormat<float16_t> {
  static constexpr int sign = 15, fraction = 10;
  static constexpr uint64_t exponent = 0x7c00;
};
template <>
struct FloatFormat<bfloat16_t> {
  static constexpr int sign = 15, fraction = 7;
  static constexpr uint64_t exponent = 0x7f80;
};
template <>
struct FloatFormat<float> {
  static constexpr int sign = 31, fraction = 23;
  static constexpr uint64_t exponent = 0x7f800000;
};
template <>
struct FloatFormat<double> {
  static constexpr int sign = 63, fraction = 52;
  static constexpr uint64_t exponent = 0x7ff0000000000000;
};

// The bits of a NaN of type D converted from a NaN of type S with bits `from`, as the CPU's
// instructions convert one (x86's cvtss2sd/cvtsd2ss, F16C, and bfloat16_t's rule): the sign kept, the
// fraction's leading bits kept, the quiet bit set. CUDA's conversions return one canonical NaN
// instead, so the device's kernels convert NaNs with this (all but bfloat16 to float, which both
// backends do by shifting the bits, exactly).
template <class D, class S>
KUSARI_HOST_DEVICE constexpr bits_t<D> nan_bits(bits_t<S> from) {
  using F = FloatFormat<S>;
  using T = FloatFormat<D>;
  const uint64_t sign = (static_cast<uint64_t>(from) >> F::sign) & 1;
  const uint64_t fraction = static_cast<uint64_t>(from) & ((uint64_t{1} << F::fraction) - 1);
  const uint64_t aligned = fraction << (64 - F::fraction);  // the fraction's bits from the top
  const uint64_t kept = aligned >> (64 - T::fraction);
  return static_cast<bits_t<D>>((sign << T::sign) | T::exponent | (uint64_t{1} << (T::fraction - 1)) | kept);
}

// True when a floating value of type T with these bits is an infinity or a NaN (its exponent all ones).
template <class T>
KUSARI_HOST_DEVICE constexpr bool non_finite_bits(bits_t<T> bits) {
  return (static_cast<uint64_t>(bits) & FloatFormat<T>::exponent) == FloatFormat<T>::exponent;
}

// True for the integer element types (not bool).
template <class T>
inline constexpr bool is_integer_element_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

}  // namespace kusari::kernels
