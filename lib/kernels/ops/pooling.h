#pragma once
// Kernel contracts of 2-D max and average pooling with their gradients. Each kernel allocates its
// output in the memory order its device prefers; max pooling's forward returns a KernelState (how it
// remembers the winners is the backend's) that its gradient kernels take back.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/kernels/ops/kernel_state.h>

namespace kusari {

// Window, strides and padding of a 2-D pooling over NCHW arrays (the output extents are y_shape's).
struct KUSARI_API Pool2dGeometry {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
};

// A max pooling's output and the backend's record of each window's winner.
struct KUSARI_API MaxPool2dResult {
  Array y;
  KernelStatePtr winners;
};

}  // namespace kusari

namespace kusari::kernel_ops {

// y (y_shape (N, C, oh, ow)) = the maximum of each window of x (N, C, H, W), padding never winning (a
// window wholly in padding gives -inf), with the winners' record.
struct KUSARI_API MaxPool2d {
  static constexpr const char* name = "max_pool2d";
  using Fn = MaxPool2dResult(const Array& x, const Pool2dGeometry& geometry, const Shape& y_shape);
};
// Returns gx of gx_shape (N, C, H, W): zeros with each gy[n, c, i] added at its window's winner.
struct KUSARI_API MaxPool2dScatter {
  static constexpr const char* name = "max_pool2d_scatter";
  using Fn = Array(const Array& gy, const KernelState& winners, const Shape& gx_shape);
};
// Returns y of the pooled output's shape: x (N, C, H, W) at each window's winner (0 for a window wholly
// in padding); MaxPool2dScatter's adjoint.
struct KUSARI_API MaxPool2dGather {
  static constexpr const char* name = "max_pool2d_gather";
  using Fn = Array(const Array& x, const KernelState& winners);
};
// Returns y of y_shape: the sum of each window of zero-padded x divided by kh * kw.
struct KUSARI_API AveragePool2d {
  static constexpr const char* name = "average_pool2d";
  using Fn = Array(const Array& x, const Pool2dGeometry& geometry, const Shape& y_shape);
};
// Returns gx of gx_shape: AveragePool2d's adjoint, each gy / (kh * kw) added over its window (the
// padding part dropped).
struct KUSARI_API AveragePool2dBackward {
  static constexpr const char* name = "average_pool2d_backward";
  using Fn = Array(const Array& gy, const Pool2dGeometry& geometry, const Shape& gx_shape);
};

}  // namespace kusari::kernel_ops
