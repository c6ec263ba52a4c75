#pragma once
// Kernel contracts that reduce: over axes, and the top-k test of each row.

#include <cstdint>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari {

// Reductions over a set of axes; arg* reduce over exactly one axis and write int64.
enum class ReduceOp { sum, max, min, argmax, argmin };

}  // namespace kusari

namespace kusari::kernel_ops {

// out = reduction of x over `axes` (sorted, unique); out has x's shape without those axes.
struct KUSARI_API Reduce {
  static constexpr const char* name = "reduce";
  using Fn = void(ReduceOp op, const Array& x, const std::vector<int64_t>& axes, const Array& out);
};
// hits[i] (bool, (N,)) for x (N, C) floating (any strides) and labels t (N,) int64 contiguous: whether
// t[i] is in [0, C), x[i, t[i]] is not NaN and fewer than k classes c have x[i, c] > x[i, t[i]].
struct KUSARI_API TopKHits {
  static constexpr const char* name = "top_k_hits";
  using Fn = void(const Array& x, const Array& t, int64_t k, const Array& hits);
};

}  // namespace kusari::kernel_ops
