#pragma once
// Internal to the CPU backend: walks several equally-shaped strided arrays together, with adjacent axes
// merged where every operand allows it (collapsed_layout.h), the outer iterations spread over the thread pool.

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>
#include <cstdint>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/parallel.h>
#include <kusari/kernels/detail/collapsed_layout.h>
#include <kusari/kernels/detail/element_conversion.h>

namespace kusari::kernels::cpu {

// Elements per parallel chunk below which a loop stays on one thread.
inline constexpr int64_t kGrain = 32768;

// Calls inner(pointers, inner_strides, count) over runs of the innermost merged axis, where pointers[k]
// is a typed pointer into arrays[k] (all arrays must share arrays[0]'s shape). Elements are typed
// by Types..., one per array.
template <class... Types, class Inner>
void strided_loop(const std::array<const Array*, sizeof...(Types)>& arrays, Inner&& inner) {
  constexpr size_t N = sizeof...(Types);
  const int64_t n = arrays[0]->size();
  if (n == 0) return;
  const auto contiguous = [](const Array* a) { return a->is_contiguous(); };
  if (n <= kGrain && std::all_of(arrays.begin(), arrays.end(), contiguous)) {
    // Small contiguous operands: one run on this thread, without merging axes or dispatching threads.
    std::array<int64_t, N> unit;
    unit.fill(1);
    [&]<size_t... I>(std::index_sequence<I...>) {
      inner(std::tuple<Types*...>{static_cast<Types*>(arrays[I]->raw_data())...}, unit, n);
    }(std::make_index_sequence<N>{});
    return;
  }
  const CollapsedLayout<N> layout = collapse<N>(arrays);
  const int64_t dims = static_cast<int64_t>(layout.extents.size());
  const int64_t run = layout.extents.back();
  const int64_t outer = arrays[0]->size() / run;
  std::array<char*, N> bases;
  std::array<int64_t, N> item;
  std::array<int64_t, N> inner_strides;
  {
    size_t k = 0;
    ((bases[k] = static_cast<char*>(arrays[k]->raw_data()), item[k] = sizeof(Types),
      inner_strides[k] = layout.strides[k].back(), ++k), ...);
  }
  // Long runs are cut into pieces so that even one contiguous array spreads over the threads.
  const int64_t piece = std::min(run, kGrain);
  const int64_t pieces = (run + piece - 1) / piece;
  const int64_t grain = std::max<int64_t>(1, kGrain / piece);
  parallel_for(outer * pieces, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      int64_t rest = o / pieces;
      const int64_t start = (o % pieces) * piece;
      std::array<int64_t, N> offset{};
      for (int64_t d = dims - 2; d >= 0; --d) {
        const int64_t i = rest % layout.extents[static_cast<size_t>(d)];
        rest /= layout.extents[static_cast<size_t>(d)];
        for (size_t k = 0; k < N; ++k) offset[k] += i * layout.strides[k][static_cast<size_t>(d)];
      }
      for (size_t k = 0; k < N; ++k) offset[k] += start * inner_strides[k];
      [&]<size_t... I>(std::index_sequence<I...>) {
        inner(std::tuple<Types*...>{reinterpret_cast<Types*>(bases[I] + offset[I] * item[I])...}, inner_strides,
              std::min(piece, run - start));
      }(std::make_index_sequence<N>{});
    }
  });
}

// Loads an element as its compute type (float for the half types).
template <class T>
inline compute_type_t<T> load(const T& value) {
  return static_cast<compute_type_t<T>>(value);
}

// Stores a compute-type value as T (rounding once, to nearest even, for the half types; a floating
// value as an integer by element_conversion.h's rule).
template <class T, class V>
inline T store(V value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value != V(0);
  } else if constexpr (std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>) {
    return T(static_cast<std::conditional_t<std::is_same_v<V, float>, float, double>>(value));
  } else if constexpr (is_integer_element_v<T> && std::is_floating_point_v<V>) {
    return integer_from_floating<T>(value);
  } else {
    return static_cast<T>(value);
  }
}

// src converted to D; a plain copy (NaN payloads included) when the types are equal.
template <class D, class S>
inline D convert(const S& value) {
  if constexpr (std::is_same_v<S, D>) {
    return value;
  } else {
    return store<D>(load(value));
  }
}

}  // namespace kusari::kernels::cpu
