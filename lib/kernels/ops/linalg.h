#pragma once
// Kernel contract of the matrix product.

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari::kernel_ops {

// out = alpha * op(a) @ op(b) + beta * out for 2-D arrays, op transposing when asked.
struct KUSARI_API Gemm {
  static constexpr const char* name = "gemm";
  using Fn = void(const Array& a, bool transpose_a, const Array& b, bool transpose_b, double alpha, double beta,
                  const Array& out);
};

}  // namespace kusari::kernel_ops
