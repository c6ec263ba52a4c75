#include <kusari/functions/convolution_2d.h>

#include <kusari/functions/reduction.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/kernels/layer_routines.h>

namespace kusari::functions {
namespace {

// Gradient of a per-channel bias: gy summed over the batch and both spatial axes.
Variable bias_gradient(const Variable& gy) { return sum(gy, {0, 2, 3}); }

Conv2dGeometry geometry_of(const Convolution2DParams& p) {
  return {p.stride.h, p.stride.w, p.pad.h, p.pad.w, p.dilation.h, p.dilation.w, p.groups};
}

// Spatial extents (H, W) of an NCHW or OIHW shape.
Int2 spatial(const Shape& shape) { return {shape[2], shape[3]}; }

// The (oh, ow) of convolving an input of spatial extents `in` with a kernel of extents `kernel`.
Int2 conv_output(const Int2& in, const Int2& kernel, const Convolution2DParams& p) {
  return {conv_outsize(in.h, kernel.h, p.stride.h, p.pad.h, p.dilation.h, p.cover_all),
          conv_outsize(in.w, kernel.w, p.stride.w, p.pad.w, p.dilation.w, p.cover_all)};
}

void check_params(const Convolution2DParams& p, const char* op) {
  require_at_least(p.stride, 1, op, "stride");
  require_at_least(p.pad, 0, op, "pad");
  require_at_least(p.dilation, 1, op, "dilation");
  if (p.groups < 1) throw ValueError(cat(op, ": expected groups of at least 1, got ", p.groups));
}

// Checks what every convolution shares: valid params, x and W of 4 axes with one floating dtype and
// device, and groups dividing the channels of x.
void check_operands(const char* op, const Variable& x, const Variable& W, const Convolution2DParams& p) {
  check_params(p, op);
  require_nchw(x, op, "x");
  require_nchw(W, op, "W");
  require_same_dtype_and_device(x, W, op);
  if (x.shape()[1] % p.groups != 0) {
    throw ShapeError(cat(op, ": groups (", p.groups, ") must divide the ", x.shape()[1], " input channels of x ",
                         x.shape()));
  }
}

// Throws unless b, when defined, is a vector of `channels` elements of x's dtype and device.
void check_bias(const char* op, const Variable& b, int64_t channels, const Variable& x) {
  if (!b.defined()) return;
  require_same_dtype_and_device(x, b, op);
  if (b.shape() != Shape{channels}) {
    throw ShapeError(cat(op, ": expected b of shape ", Shape{channels}, " for the output channels, got ", b.shape()));
  }
}

// x's output extents under W's kernel; throws when the dilated kernel exceeds the padded input.
Int2 checked_conv_output(const char* op, const Variable& x, const Shape& weight_shape, const Convolution2DParams& p) {
  const Int2 out = conv_output(spatial(x.shape()), spatial(weight_shape), p);
  if (out.h < 1 || out.w < 1) {
    const Int2 span{(weight_shape[2] - 1) * p.dilation.h + 1, (weight_shape[3] - 1) * p.dilation.w + 1};
    const Int2 padded{x.shape()[2] + 2 * p.pad.h, x.shape()[3] + 2 * p.pad.w};
    throw ShapeError(cat(op, ": the kernel of W ", weight_shape, " spans ", span, " with dilation ", p.dilation,
                         ", larger than the padded input ", padded, " of x ", x.shape()));
  }
  return out;
}

// Inputs (x, W[, b]) -> convolution.
class Convolution2D final : public FunctionNode {
 public:
  explicit Convolution2D(const Convolution2DParams& params) : params_(params) {}
  std::string label() const override { return "Convolution2D"; }
  std::vector<Array> forward(const std::vector<Array>& in) override {
    retain_inputs({0, 1});
    const Array &x = in[0], &w = in[1];
    const Int2 out = conv_output(spatial(x.shape()), spatial(w.shape()), params_);
    return {ops::convolution_2d(x, w, in.size() > 2 ? in[2] : Array(), geometry_of(params_),
                                Shape{x.shape()[0], w.shape()[0], out.h, out.w})};
  }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    const std::vector<Variable> xw = get_retained_inputs();
    const Variable &x = xw[0], &W = xw[1];
    std::vector<Variable> grads;
    for (size_t i : targets) {
      if (i == 0) grads.push_back(deconvolution_2d(gy[0], W, params_, spatial(x.shape())));
      if (i == 1) grads.push_back(convolution_2d_grad_weight(x, gy[0], W.shape(), params_));
      if (i == 2) grads.push_back(bias_gradient(gy[0]));
    }
    return grads;
  }

 private:
  Convolution2DParams params_;
};

// Inputs (x, W[, b]) -> transposed convolution with output extents `outsize`.
class Deconvolution2D final : public FunctionNode {
 public:
  Deconvolution2D(const Convolution2DParams& params, const Int2& outsize) : params_(params), outsize_(outsize) {}
  std::string label() const override { return "Deconvolution2D"; }
  std::vector<Array> forward(const std::vector<Array>& in) override {
    retain_inputs({0, 1});
    const Array &x = in[0], &w = in[1];
    const int64_t channels = w.shape()[1] * params_.groups;
    return {ops::convolution_2d_backward_data(x, w, in.size() > 2 ? in[2] : Array(), geometry_of(params_),
                                              Shape{x.shape()[0], channels, outsize_.h, outsize_.w})};
  }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& gy) override {
    const std::vector<Variable> xw = get_retained_inputs();
    const Variable &x = xw[0], &W = xw[1];
    std::vector<Variable> grads;
    for (size_t i : targets) {
      if (i == 0) grads.push_back(convolution_2d(gy[0], W, params_));
      if (i == 1) grads.push_back(convolution_2d_grad_weight(gy[0], x, W.shape(), params_));
      if (i == 2) grads.push_back(bias_gradient(gy[0]));
    }
    return grads;
  }

 private:
  Convolution2DParams params_;
  Int2 outsize_;
};

// Inputs (x, gy) -> the filter gradient of the convolution of x that gave gy.
class Convolution2DGradW final : public FunctionNode {
 public:
  Convolution2DGradW(const Convolution2DParams& params, Shape weight_shape)
      : params_(params), weight_shape_(std::move(weight_shape)) {}
  std::string label() const override { return "Convolution2DGradW"; }
  std::vector<Array> forward(const std::vector<Array>& in) override {
    retain_inputs({0, 1});
    return {ops::convolution_2d_backward_filter(in[0], in[1], geometry_of(params_), weight_shape_)};
  }
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>& ggw) override {
    const std::vector<Variable> xgy = get_retained_inputs();
    const Variable &x = xgy[0], &gy = xgy[1];
    std::vector<Variable> grads;
    for (size_t i : targets) {
      if (i == 0) grads.push_back(deconvolution_2d(gy, ggw[0], params_, spatial(x.shape())));
      if (i == 1) grads.push_back(convolution_2d(x, ggw[0], params_));
    }
    return grads;
  }

 private:
  Convolution2DParams params_;
  Shape weight_shape_;
};

// The operands of a node: (x, W) followed by b when it is defined.
std::vector<Variable> operands(const Variable& x, const Variable& W, const Variable& b) {
  return b.defined() ? std::vector<Variable>{x, W, b} : std::vector<Variable>{x, W};
}

}  // namespace

Variable convolution_2d(const Variable& x, const Variable& W, const Convolution2DParams& params) {
  return convolution_2d(x, W, Variable(), params);
}

Variable convolution_2d(const Variable& x, const Variable& W, const Variable& b, const Convolution2DParams& params) {
  const char* op = "convolution_2d";
  check_operands(op, x, W, params);
  if (W.shape()[0] % params.groups != 0) {
    throw ShapeError(cat(op, ": groups (", params.groups, ") must divide the ", W.shape()[0],
                         " output channels of W ", W.shape()));
  }
  if (W.shape()[1] * params.groups != x.shape()[1]) {
    throw ShapeError(cat(op, ": expected W of shape (O, ", x.shape()[1] / params.groups, ", kh, kw) for the ",
                         x.shape()[1], " channels of x ", x.shape(), " in ", params.groups, " groups, got W ",
                         W.shape()));
  }
  check_bias(op, b, W.shape()[0], x);
  checked_conv_output(op, x, W.shape(), params);
  return apply_single<Convolution2D>(operands(x, W, b), params);
}

Variable deconvolution_2d(const Variable& x, const Variable& W, const Convolution2DParams& params,
                          std::optional<Int2> outsize) {
  return deconvolution_2d(x, W, Variable(), params, outsize);
}

Variable deconvolution_2d(const Variable& x, const Variable& W, const Variable& b, const Convolution2DParams& params,
                          std::optional<Int2> outsize) {
  const char* op = "deconvolution_2d";
  check_operands(op, x, W, params);
  if (W.shape()[0] != x.shape()[1]) {
    throw ShapeError(cat(op, ": expected W of shape (", x.shape()[1], ", O / groups, kh, kw) for the channels of x ",
                         x.shape(), ", got W ", W.shape()));
  }
  check_bias(op, b, W.shape()[1] * params.groups, x);
  Convolution2DParams resolved = params;
  const Int2 kernel = spatial(W.shape()), in = spatial(x.shape());
  if (outsize) {
    require_at_least(*outsize, 1, op, "outsize");
    resolved.cover_all = conv_output(*outsize, kernel, {.stride = params.stride, .pad = params.pad,
                                                        .dilation = params.dilation}) != in;
    if (conv_output(*outsize, kernel, resolved) != in) {
      throw ShapeError(cat(op, ": outsize ", *outsize, " does not convolve back to the spatial extents ", in,
                           " of x ", x.shape(), " with W ", W.shape(), " (stride ", params.stride, ", pad ",
                           params.pad, ", dilation ", params.dilation, ")"));
    }
  } else {
    outsize = Int2{deconv_outsize(in.h, kernel.h, params.stride.h, params.pad.h, params.dilation.h, params.cover_all),
                   deconv_outsize(in.w, kernel.w, params.stride.w, params.pad.w, params.dilation.w, params.cover_all)};
    if (outsize->h < 1 || outsize->w < 1) {
      throw ShapeError(cat(op, ": the output extents ", *outsize, " of x ", x.shape(), " with W ", W.shape(),
                           " and pad ", params.pad, " are empty"));
    }
  }
  return apply_single<Deconvolution2D>(operands(x, W, b), resolved, *outsize);
}

Variable convolution_2d_grad_weight(const Variable& x, const Variable& gy, const Shape& weight_shape,
                                    const Convolution2DParams& params) {
  const char* op = "convolution_2d_grad_weight";
  check_params(params, op);
  require_nchw(x, op, "x");
  require_nchw(gy, op, "gy");
  require_same_dtype_and_device(x, gy, op);
  const bool fits = weight_shape.ndim() == 4 && weight_shape[0] % params.groups == 0 &&
                    weight_shape[1] * params.groups == x.shape()[1];
  if (!fits) {
    throw ShapeError(cat(op, ": weight shape ", weight_shape, " does not fit x ", x.shape(), " in ", params.groups,
                         " groups"));
  }
  const Int2 out = checked_conv_output(op, x, weight_shape, params);
  const Shape expected{x.shape()[0], weight_shape[0], out.h, out.w};
  if (gy.shape() != expected) {
    throw ShapeError(cat(op, ": expected gy of shape ", expected, " for x ", x.shape(), " and weight shape ",
                         weight_shape, ", got ", gy.shape()));
  }
  return apply_single<Convolution2DGradW>({x, gy}, params, weight_shape);
}

}  // namespace kusari::functions
