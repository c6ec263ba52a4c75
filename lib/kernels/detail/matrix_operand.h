#pragma once
// Internal to the backends: a 2-D operand of a matrix product as a BLAS library takes it (OpenBLAS and
// oneDNN on the CPU, cuBLASLt on CUDA): a row-major matrix whose rows are `leading` elements apart,
// read transposed or not. An array with unit stride along either axis is used where it lies; any
// other is copied first.

#include <algorithm>
#include <cstdint>

#include <kusari/core/array.h>

namespace kusari::kernels {

// The storage a BLAS call reads, whether it reads it transposed, and the distance between its rows.
struct MatrixOperand {
  Array array;
  bool transpose;
  int64_t leading;
};

// op(a) (a transposed when `transpose`) as a MatrixOperand.
inline MatrixOperand as_matrix_operand(const Array& a, bool transpose) {
  const int64_t rows = a.shape()[0], cols = a.shape()[1];
  const int64_t s0 = a.strides()[0], s1 = a.strides()[1];
  if ((s1 == 1 || cols == 1) && s0 >= std::max<int64_t>(1, cols)) return {a, transpose, s0};
  if ((s0 == 1 || rows == 1) && s1 >= std::max<int64_t>(1, rows)) return {a, !transpose, s1};
  return {a.copy(), transpose, std::max<int64_t>(1, cols)};
}

// Whether BLAS can write `out` (rows x cols) where it lies: unit stride along a row, rows apart by at
// least a row's length.
inline bool writable_in_place(const Array& out) {
  return out.strides()[1] == 1 && out.strides()[0] >= std::max<int64_t>(1, out.shape()[1]);
}

}  // namespace kusari::kernels
