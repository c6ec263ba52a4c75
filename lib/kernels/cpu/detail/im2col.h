#pragma once
// Internal to the CPU backend: the column matrix of one image, whose row (c, i, j) holds input channel c
// seen through kernel tap (i, j) at every output position, so that a convolution becomes one GEMM.

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <kusari/kernels/ops/convolution.h>

namespace kusari::kernels::cpu {

// Extents of one image (channels, height, width), of the kernel and of the output, with the geometry.
struct ColumnLayout {
  int64_t channels, height, width;
  int64_t kernel_h, kernel_w;
  int64_t out_h, out_w;
  Conv2dGeometry geometry;

  // Rows of the column matrix: channels * kernel_h * kernel_w.
  int64_t rows() const { return channels * kernel_h * kernel_w; }
  // Columns of the column matrix: out_h * out_w.
  int64_t cols() const { return out_h * out_w; }
  // True when the column matrix is the image itself (1x1 kernel, unit stride, no padding).
  bool is_identity() const {
    return kernel_h == 1 && kernel_w == 1 && geometry.stride_h == 1 && geometry.stride_w == 1 &&
           geometry.pad_h == 0 && geometry.pad_w == 0 && out_h == height && out_w == width;
  }
};

// The first output position o >= 0 with o * stride + shift >= limit, clamped to [0, count].
inline int64_t first_position_reaching(int64_t limit, int64_t shift, int64_t stride, int64_t count) {
  const int64_t need = limit - shift;  // o * stride >= need
  const int64_t o = need <= 0 ? 0 : (need + stride - 1) / stride;
  return std::min(o, count);
}

// Calls row(col_offset, x_offset, begin, end) for every output row of every column row: the out_w
// entries at col_offset; entries [begin, end) read input element x_offset + o * stride_w, the others
// lie in padding. x_offset is -1 (and begin == end) for a row wholly in padding.
template <class RowFn>
void for_each_column_row(const ColumnLayout& l, RowFn&& row) {
  const Conv2dGeometry& g = l.geometry;
  for (int64_t c = 0; c < l.channels; ++c) {
    for (int64_t i = 0; i < l.kernel_h; ++i) {
      for (int64_t j = 0; j < l.kernel_w; ++j) {
        const int64_t tap_w = j * g.dilation_w - g.pad_w;  // input column = o * stride_w + tap_w
        const int64_t begin = first_position_reaching(0, tap_w, g.stride_w, l.out_w);
        const int64_t end = std::max(begin, first_position_reaching(l.width, tap_w, g.stride_w, l.out_w));
        const int64_t col_row = ((c * l.kernel_h + i) * l.kernel_w + j) * l.out_h;
        for (int64_t oy = 0; oy < l.out_h; ++oy) {
          const int64_t iy = oy * g.stride_h + i * g.dilation_h - g.pad_h;
          const int64_t col_offset = (col_row + oy) * l.out_w;
          if (iy < 0 || iy >= l.height) {
            row(col_offset, int64_t{-1}, int64_t{0}, int64_t{0});
          } else {
            row(col_offset, (c * l.height + iy) * l.width + tap_w, begin, end);
          }
        }
      }
    }
  }
}

// Writes the column matrix (rows() x cols(), row-major) of image x (channels, height, width) to col.
template <class T>
void im2col(const T* x, const ColumnLayout& l, T* col) {
  const int64_t stride = l.geometry.stride_w;
  for_each_column_row(l, [&](int64_t col_offset, int64_t x_offset, int64_t begin, int64_t end) {
    T* out = col + col_offset;
    std::fill(out, out + begin, T(0));
    if (stride == 1) {
      if (end > begin) std::memcpy(out + begin, x + x_offset + begin, static_cast<size_t>(end - begin) * sizeof(T));
    } else {
      for (int64_t o = begin; o < end; ++o) out[o] = x[x_offset + o * stride];
    }
    std::fill(out + end, out + l.out_w, T(0));
  });
}

// Sets image gx (channels, height, width) to the adjoint of im2col applied to col: each entry added to
// the input element it was read from.
template <class T>
void col2im(const T* col, const ColumnLayout& l, T* gx) {
  std::fill(gx, gx + l.channels * l.height * l.width, T(0));
  const int64_t stride = l.geometry.stride_w;
  for_each_column_row(l, [&](int64_t col_offset, int64_t x_offset, int64_t begin, int64_t end) {
    const T* in = col + col_offset;
    for (int64_t o = begin; o < end; ++o) gx[x_offset + o * stride] += in[o];
  });
}

}  // namespace kusari::kernels::cpu
