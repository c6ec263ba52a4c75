#pragma once
// Internal to the backends, compiled for the host and (under nvcc) for the device: what a reduction
// accumulates in, where it starts, how it combines two values, and the top-k comparison, so that the
// CPU's loops and the CUDA kernels reduce by one rule.

#include <cstdint>
#include <limits>
#include <type_traits>

#include <kusari/core/dtype.h>
#include <kusari/kernels/detail/element_conversion.h>
#include <kusari/kernels/ops/reduction.h>

namespace kusari::kernels {

// The accumulator type: double for floating values, int64 for integers (sums of uint8 do not wrap).
template <class T>
using Accumulator = std::conditional_t<std::is_floating_point_v<compute_type_t<T>>, double, int64_t>;

// The start of a sum, max or min: floating max/min start from -inf/+inf so that a slice of infinities
// reduces to an infinity.
template <class A>
KUSARI_HOST_DEVICE constexpr A reduce_init(ReduceOp op) {
  using Limits = std::numeric_limits<A>;
  if (op == ReduceOp::sum) return A(0);
  if (op == ReduceOp::max) return Limits::has_infinity ? -Limits::infinity() : Limits::lowest();
  return Limits::has_infinity ? Limits::infinity() : Limits::max();
}

// acc combined with v by a sum, max or min (NaN wins max and min).
template <class A>
KUSARI_HOST_DEVICE inline A reduce_combine(ReduceOp op, A acc, A v) {
  if (op == ReduceOp::sum) return acc + v;
  if (v != v || acc != acc) return acc != acc ? acc : v;
  return op == ReduceOp::max ? (v > acc ? v : acc) : (v < acc ? v : acc);
}

// Whether candidate (v at index i) replaces the best so far (best at index b) of an argmax (want_max)
// or argmin: the first NaN wins, else the larger (smaller) value, ties going to the lower index.
template <class A>
KUSARI_HOST_DEVICE inline bool arg_better(bool want_max, A v, int64_t i, A best, int64_t b) {
  const bool v_nan = v != v, best_nan = best != best;
  if (v_nan || best_nan) return v_nan && (!best_nan || i < b);
  if (v == best) return i < b;
  return want_max ? v > best : v < best;
}

// 1 when class c (score v) outranks the label (score target) in the top-k test: higher, or tied at a
// lower index (ties go to the first class, as argmax does).
template <class C>
KUSARI_HOST_DEVICE inline int64_t outranks(C v, int64_t c, C target, int64_t label) {
  return (v > target) | ((v == target) & (c < label));
}

}  // namespace kusari::kernels
