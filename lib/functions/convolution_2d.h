#pragma once
// 2-D convolution over NCHW-shaped arrays, its transpose (deconvolution) and its filter gradient; each
// one's backward is written with the others, so gradients of any order exist. Inputs may be in any
// memory order; convolution and deconvolution write channels-last results (core/memory_order.h), the
// order their CPU kernels compute in without reordering, and the filter gradient a row-major one.

#include <optional>

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>
#include <kusari/functions/window_2d.h>

namespace kusari::functions {

// Options of the convolutions, e.g. {.stride = 2, .pad = 1} or {.pad = {1, 0}, .groups = 4}.
struct KUSARI_API Convolution2DParams {
  Int2 stride = 1;          // step of the window
  Int2 pad = 0;             // zeros added on both sides of the input
  Int2 dilation = 1;        // distance between kernel taps
  int64_t groups = 1;       // channel groups convolved independently
  bool cover_all = false;   // add a last window where the stride would leave input elements uncovered
};

// y (N, O, oh, ow) = x (N, C, H, W) correlated with W (O, C / groups, kh, kw), as Chainer's
// convolution_2d; oh = conv_outsize(H, kh, stride.h, pad.h, dilation.h, cover_all), likewise ow.
KUSARI_API Variable convolution_2d(const Variable& x, const Variable& W, const Convolution2DParams& params = {});
// convolution_2d(x, W, params) plus b (O) on each output channel.
KUSARI_API Variable convolution_2d(const Variable& x, const Variable& W, const Variable& b,
                                   const Convolution2DParams& params = {});

// y (N, O, oh, ow) = the transposed convolution of x (N, C, H, W) with W (C, O / groups, kh, kw): the
// adjoint of convolution_2d in its input. Without outsize, oh = deconv_outsize(H, ...) with
// params.cover_all; with it, cover_all is inferred as Chainer does (x must be what a convolution of
// an outsize input gives).
KUSARI_API Variable deconvolution_2d(const Variable& x, const Variable& W, const Convolution2DParams& params = {},
                                     std::optional<Int2> outsize = {});
// deconvolution_2d(x, W, params, outsize) plus b (O) on each output channel.
KUSARI_API Variable deconvolution_2d(const Variable& x, const Variable& W, const Variable& b,
                                     const Convolution2DParams& params = {}, std::optional<Int2> outsize = {});

// The gradient of convolution_2d(x, W, params) with respect to a W of shape weight_shape, given the
// output gradient gy.
KUSARI_API Variable convolution_2d_grad_weight(const Variable& x, const Variable& gy, const Shape& weight_shape,
                                               const Convolution2DParams& params);

}  // namespace kusari::functions
