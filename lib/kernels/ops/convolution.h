#pragma once
// Kernel contracts of 2-D convolution: forward, data gradient (the transposed convolution) and filter
// gradient. Each kernel allocates its output in the memory order its device prefers.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari {

// Strides, padding, dilation and groups of a 2-D convolution over NCHW arrays (the kernel extents are
// read from the filter's shape).
struct KUSARI_API Conv2dGeometry {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
};

}  // namespace kusari

namespace kusari::kernel_ops {

// The operands below have any layout and one floating dtype.

// Returns y of y_shape (N, O, oh, ow): x (N, C, H, W) correlated with w (O, C/groups, kh, kw), plus
// b (O) when defined.
struct KUSARI_API Conv2d {
  static constexpr const char* name = "conv2d";
  using Fn = Array(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& geometry,
                   const Shape& y_shape);
};
// Returns gx of gx_shape (N, C, H, W): the transposed convolution of gy (N, O, oh, ow) with
// w (O, C/groups, kh, kw), plus b (C) when defined; Conv2d's adjoint in x, and a deconvolution's forward.
struct KUSARI_API Conv2dBackwardData {
  static constexpr const char* name = "conv2d_backward_data";
  using Fn = Array(const Array& gy, const Array& w, const Array& b, const Conv2dGeometry& geometry,
                   const Shape& gx_shape);
};
// Returns gw of gw_shape (O, C/groups, kh, kw), row-major: Conv2d's adjoint in w, the correlation of
// x (N, C, H, W) with gy (N, O, oh, ow).
struct KUSARI_API Conv2dBackwardFilter {
  static constexpr const char* name = "conv2d_backward_filter";
  using Fn = Array(const Array& x, const Array& gy, const Conv2dGeometry& geometry, const Shape& gw_shape);
};

}  // namespace kusari::kernel_ops
