#pragma once
// Internal to the backends: the layout several equally-shaped strided arrays share once unit axes are
// dropped and neighbouring axes every operand lets merge are merged (the CPU's strided loops walk it,
// the CUDA kernels index it).

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include <kusari/core/array.h>
#include <kusari/core/small_vector.h>

namespace kusari::kernels {

// Shape and per-operand element strides after dropping unit axes, ordering the axes by stride and
// merging mergeable neighbours.
template <size_t N>
struct CollapsedLayout {
  SmallVector<int64_t, 8> extents;
  std::array<SmallVector<int64_t, 8>, N> strides;
};

// The non-unit axes of arrays[0]'s shape from outermost to innermost in memory: an axis goes inside
// another when the first array whose strides on the two differ (neither being 0) has the smaller
// stride there; axes no array tells apart keep their order. Dense arrays of one permuted order (such
// as channels-last ones) thus come out in memory order and merge into one run.
template <size_t N>
SmallVector<int64_t, 8> memory_axis_order(const std::array<const Array*, N>& arrays) {
  const Shape& shape = arrays[0]->shape();
  SmallVector<int64_t, 8> axes;
  for (int64_t axis = 0; axis < shape.ndim(); ++axis) {
    if (shape[axis] != 1) axes.push_back(axis);
  }
  const auto goes_inside = [&](int64_t axis, int64_t other) {
    for (const Array* a : arrays) {
      const int64_t s = a->strides()[static_cast<size_t>(axis)], t = a->strides()[static_cast<size_t>(other)];
      if (s != 0 && t != 0 && s != t) return s < t;
    }
    return axis > other;
  };
  for (size_t i = 1; i < axes.size(); ++i) {
    for (size_t j = i; j > 0 && goes_inside(axes[j - 1], axes[j]); --j) std::swap(axes[j - 1], axes[j]);
  }
  return axes;
}

template <size_t N>
CollapsedLayout<N> collapse(const std::array<const Array*, N>& arrays) {
  const Shape& shape = arrays[0]->shape();
  CollapsedLayout<N> layout;
  for (const int64_t axis : memory_axis_order<N>(arrays)) {
    const auto i = static_cast<size_t>(axis);
    bool merge = !layout.extents.empty();
    for (size_t k = 0; k < N && merge; ++k) {
      merge = layout.strides[k].back() == arrays[k]->strides()[i] * shape[axis];
    }
    if (merge) {
      layout.extents.back() *= shape[axis];
      for (size_t k = 0; k < N; ++k) layout.strides[k].back() = arrays[k]->strides()[i];
    } else {
      layout.extents.push_back(shape[axis]);
      for (size_t k = 0; k < N; ++k) layout.strides[k].push_back(arrays[k]->strides()[i]);
    }
  }
  if (layout.extents.empty()) {
    layout.extents.push_back(1);
    for (size_t k = 0; k < N; ++k) layout.strides[k].push_back(0);
  }
  return layout;
}

}  // namespace kusari::kernels
