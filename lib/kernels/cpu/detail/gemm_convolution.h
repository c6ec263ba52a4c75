#pragma once
// Internal to the CPU backend: 2-D convolutions of contiguous float64 NCHW arrays by im2col and GEMM,
// with the operands and results of the Conv2d kernel ops (kusari/kernels/ops/convolution.h).

#include <kusari/kernels/ops/convolution.h>

namespace kusari::kernels::cpu {

// y = x correlated with w, plus b when defined.
void gemm_conv2d(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& geometry, const Array& y);
// gx = the transposed convolution of gy with w, plus b (one value per channel of gx) when defined.
void gemm_conv2d_backward_data(const Array& gy, const Array& w, const Array& b, const Conv2dGeometry& geometry,
                               const Array& gx);
// gw = the correlation of x with gy.
void gemm_conv2d_backward_filter(const Array& x, const Array& gy, const Conv2dGeometry& geometry, const Array& gw);

}  // namespace kusari::kernels::cpu
