#pragma once
// Internal to the CUDA backend: elements on the device as the CPU backend treats them, to the bit. The
// half types load as float and store rounding once to nearest even (from a double directly, never
// through float); NaNs convert as x86 converts them; bool stores v != 0; floating values become
// integers by element_conversion.h's rule; equal types copy their bits. Also the layout of up to kMaxAxes strided operands
// that a kernel indexes, built from the axes the CPU's loops would merge.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <array>
#include <cstdint>
#include <type_traits>

#include <kusari/core/dtype.h>
#include <kusari/core/error.h>
#include <kusari/kernels/detail/collapsed_layout.h>
#include <kusari/kernels/detail/element_conversion.h>
#include <kusari/kernels/detail/fast_division.h>

namespace kusari::kernels::cuda {

// The type an element of T is computed in on the device (float for the half types).
template <class T>
using device_compute_t = compute_type_t<T>;

// A floating value's bits.
template <class T>
__device__ inline bits_t<T> bits_of(T value) {
  if constexpr (std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>) {
    return value.bits;
  } else {
    bits_t<T> out;
    memcpy(&out, &value, sizeof(T));
    return out;
  }
}

// The floating value with these bits.
template <class T>
__device__ inline T from_bits(bits_t<T> bits) {
  T out;
  memcpy(&out, &bits, sizeof(T));
  return out;
}

// True for the four floating element types.
template <class T>
inline constexpr bool is_floating_element_v =
    std::is_floating_point_v<T> || std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>;

// Loads an element as its compute type.
template <class T>
__device__ inline device_compute_t<T> load(const T& value) {
  if constexpr (std::is_same_v<T, float16_t>) {
    if ((value.bits & 0x7fff) > 0x7c00) return from_bits<float>(nan_bits<float, float16_t>(value.bits));
    return __half2float(__ushort_as_half(value.bits));
  } else if constexpr (std::is_same_v<T, bfloat16_t>) {
    return __uint_as_float(static_cast<uint32_t>(value.bits) << 16);
  } else {
    return value;
  }
}

// Stores a compute-type value as T: a NaN as nan_bits converts it, a floating value as an integer by
// element_conversion.h's rule.
template <class T, class V>
__device__ inline T store(V value) {
  if constexpr (std::is_floating_point_v<V> && is_floating_element_v<T> && !std::is_same_v<T, V>) {
    if (value != value) return from_bits<T>(nan_bits<T, V>(bits_of(value)));
  }
  T out;
  if constexpr (std::is_same_v<T, bool>) {
    out = value != V(0);
  } else if constexpr (std::is_same_v<T, float16_t>) {
    out.bits = __half_as_ushort(std::is_same_v<V, float> ? __float2half_rn(static_cast<float>(value))
                                                          : __double2half(static_cast<double>(value)));
  } else if constexpr (std::is_same_v<T, bfloat16_t>) {
    out.bits = __bfloat16_as_ushort(std::is_same_v<V, float> ? __float2bfloat16_rn(static_cast<float>(value))
                                                              : __double2bfloat16(static_cast<double>(value)));
  } else if constexpr (is_integer_element_v<T> && std::is_floating_point_v<V>) {
    out = integer_from_floating<T>(value);
  } else {
    out = static_cast<T>(value);
  }
  return out;
}

// value converted to D; its bits when the types are equal.
template <class D, class S>
__device__ inline D convert(const S& value) {
  if constexpr (std::is_same_v<S, D>) {
    return value;
  } else {
    return store<D>(load(value));
  }
}

// The most axes a kernel's operands may keep after merging.
inline constexpr int kMaxAxes = 12;

// N operands' shared extents and element strides, innermost axis last, passed to a kernel by value;
// where every index fits 32 bits (`fast`), a divider of each extent, so that an index becomes a
// position on the axes by multiplies and shifts (fast_division.h).
template <size_t N>
struct KernelLayout {
  int axes = 0;
  int64_t size = 0;
  int64_t extents[kMaxAxes];
  int64_t strides[N][kMaxAxes];
  char* bases[N];
  bool fast = false;
  FastDivider dividers[kMaxAxes];
};

// Fills a layout from extents and per-operand strides (innermost last); throws ValueError for more
// axes than a kernel indexes.
template <size_t N, class Extents, class Strides>
KernelLayout<N> layout_of(const std::array<const Array*, N>& arrays, const Extents& extents, const Strides& strides,
                          const char* op) {
  KernelLayout<N> layout;
  layout.axes = static_cast<int>(extents.size());
  if (layout.axes > kMaxAxes) {
    throw ValueError(cat(op, ": the CUDA kernels take operands of at most ", kMaxAxes, " axes that cannot merge, got ",
                         layout.axes));
  }
  layout.size = arrays[0]->size();
  layout.fast = layout.size > 0 && fits_fast_division(layout.size);
  for (int d = 0; d < layout.axes; ++d) {
    layout.extents[d] = extents[static_cast<size_t>(d)];
    for (size_t k = 0; k < N; ++k) layout.strides[k][d] = strides[k][static_cast<size_t>(d)];
    if (layout.fast) layout.dividers[d] = FastDivider(layout.extents[d]);
  }
  for (size_t k = 0; k < N; ++k) layout.bases[k] = static_cast<char*>(arrays[k]->raw_data());
  return layout;
}

// The layout of equally-shaped arrays for kernels whose elements are independent (copies, maps): axes
// in memory order, merged where every operand allows (collapsed_layout.h), so that index i is some
// element, the same one in every operand, but not the i-th in row-major order.
template <size_t N>
KernelLayout<N> kernel_layout(const std::array<const Array*, N>& arrays, const char* op) {
  const CollapsedLayout<N> collapsed = collapse<N>(arrays);
  return layout_of<N>(arrays, collapsed.extents, collapsed.strides, op);
}

// The layout for kernels that need to know which element index i is (a random draw's position, a
// channel): the axes in their logical order, unit axes dropped and a pair merged only when it is
// contiguous in every operand, so that i is the row-major index of the logical shape.
template <size_t N>
KernelLayout<N> logical_kernel_layout(const std::array<const Array*, N>& arrays, const char* op) {
  const Shape& shape = arrays[0]->shape();
  SmallVector<int64_t, 8> extents;
  std::array<SmallVector<int64_t, 8>, N> strides;
  for (int64_t axis = 0; axis < shape.ndim(); ++axis) {
    if (shape[axis] == 1) continue;
    const auto stride = [&](size_t k) { return arrays[k]->strides()[static_cast<size_t>(axis)]; };
    bool merges = !extents.empty();
    for (size_t k = 0; k < N && merges; ++k) merges = strides[k].back() == stride(k) * shape[axis];
    if (merges) {
      extents.back() *= shape[axis];
      for (size_t k = 0; k < N; ++k) strides[k].back() = stride(k);
    } else {
      extents.push_back(shape[axis]);
      for (size_t k = 0; k < N; ++k) strides[k].push_back(stride(k));
    }
  }
  return layout_of<N>(arrays, extents, strides, op);
}

// Every operand's element offset of index i (row-major over the layout's extents), dividing i once per
// axis for all of them: by the axes' dividers where the layout is fast, else in 64 bits.
template <size_t N>
__device__ inline void element_offsets(const KernelLayout<N>& layout, int64_t i, int64_t (&offsets)[N]) {
  if (layout.axes == 1) {
    for (size_t k = 0; k < N; ++k) offsets[k] = i * layout.strides[k][0];
    return;
  }
  for (size_t k = 0; k < N; ++k) offsets[k] = 0;
  if (layout.fast) {
    auto rest = static_cast<uint32_t>(i);
    for (int d = layout.axes - 1; d >= 0; --d) {
      const QuotientRemainder qr = layout.dividers[d].divide_with_remainder(rest);
      for (size_t k = 0; k < N; ++k) offsets[k] += static_cast<int64_t>(qr.remainder) * layout.strides[k][d];
      rest = qr.quotient;
    }
    return;
  }
  for (int d = layout.axes - 1; d >= 0; --d) {
    const int64_t outer = i / layout.extents[d], place = i - outer * layout.extents[d];
    for (size_t k = 0; k < N; ++k) offsets[k] += place * layout.strides[k][d];
    i = outer;
  }
}

// Operand k's element i (i in row-major order of the layout's extents), typed T: for one-operand
// kernels (kernels of several take every offset from one element_offsets call).
template <class T, size_t N>
__device__ inline T& element(const KernelLayout<N>& layout, size_t k, int64_t i) {
  int64_t offsets[N];
  element_offsets(layout, i, offsets);
  return reinterpret_cast<T*>(layout.bases[k])[offsets[k]];
}

// Operand k's element at `offset` elements from its base, typed T.
template <class T, size_t N>
__device__ inline T& element_at(const KernelLayout<N>& layout, size_t k, int64_t offset) {
  return reinterpret_cast<T*>(layout.bases[k])[offset];
}

// The momentum step of one element: v = m·v − r·g, then w += v (momentum_step's kernel and the
// multi-tensor one compute it alike).
template <class T, class C>
__device__ inline void momentum_step_element(T& w, T& v, C g, C momentum, C lr) {
  v = store<T>(momentum * load(v) - lr * g);
  w = store<T>(load(w) + load(v));
}

// Threads per block of the elementwise kernels, and the grid that covers n elements (grid-stride loops
// take the rest).
inline constexpr int kThreads = 256;
inline unsigned blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

}  // namespace kusari::kernels::cuda
