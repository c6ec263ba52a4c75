#include <kusari/functions/pooling.h>

#include <kusari/functions/arithmetic.h>
#include <kusari/functions/reduction.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/kernels/layer_routines.h>

namespace kusari::functions {
namespace {

// Input (N, C, H, W) -> window maxima; keeps the backend's record of the winners for the backward nodes.
class MaxPooling2D final : public FunctionNode {
 public:
  MaxPooling2D(const Pool2dGeometry& geometry, const Int2& outsize) : geometry_(geometry), outsize_(outsize) {}
  std::string label() const override { return "MaxPooling2D"; }
  std::vector<Array> forward(const std::vector<Array>& in) override;
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override;

 private:
  Pool2dGeometry geometry_;
  Int2 outsize_;
  KernelStatePtr winners_;
};

// Input gy (N, C, oh, ow) -> gx of shape `shape`, each gy element added at its window's maximum.
class MaxPoolingScatter final : public FunctionNode {
 public:
  MaxPoolingScatter(KernelStatePtr winners, Shape shape) : winners_(std::move(winners)), shape_(std::move(shape)) {}
  std::string label() const override { return "MaxPoolingScatter"; }
  std::vector<Array> forward(const std::vector<Array>& in) override {
    return {ops::max_pooling_2d_scatter(in[0], *winners_, shape_)};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& ggx) override;

 private:
  KernelStatePtr winners_;
  Shape shape_;
};

// Input x (N, C, H, W) -> the elements at the windows' maxima, of the pooled output's shape.
class MaxPoolingGather final : public FunctionNode {
 public:
  explicit MaxPoolingGather(KernelStatePtr winners) : winners_(std::move(winners)) {}
  std::string label() const override { return "MaxPoolingGather"; }
  std::vector<Array> forward(const std::vector<Array>& in) override {
    return {ops::max_pooling_2d_gather(in[0], *winners_)};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {apply_single<MaxPoolingScatter>({gy[0]}, winners_, inputs()[0]->shape)};
  }

 private:
  KernelStatePtr winners_;
};

std::vector<Array> MaxPooling2D::forward(const std::vector<Array>& in) {
  const Array& x = in[0];
  MaxPool2dResult pooled = ops::max_pooling_2d(x, geometry_, Shape{x.shape()[0], x.shape()[1], outsize_.h, outsize_.w});
  winners_ = std::move(pooled.winners);
  return {pooled.y};
}

std::vector<Variable> MaxPooling2D::backward(const std::vector<size_t>&, const std::vector<Variable>& gy) {
  return {apply_single<MaxPoolingScatter>({gy[0]}, winners_, inputs()[0]->shape)};
}

std::vector<Variable> MaxPoolingScatter::backward(const std::vector<size_t>&, const std::vector<Variable>& ggx) {
  return {apply_single<MaxPoolingGather>({ggx[0]}, winners_)};
}

// Input (N, C, H, W) -> window means.
class AveragePooling2D final : public FunctionNode {
 public:
  AveragePooling2D(const Pool2dGeometry& geometry, const Int2& outsize) : geometry_(geometry), outsize_(outsize) {}
  std::string label() const override { return "AveragePooling2D"; }
  std::vector<Array> forward(const std::vector<Array>& in) override {
    const Array& x = in[0];
    return {ops::average_pooling_2d(x, geometry_, Shape{x.shape()[0], x.shape()[1], outsize_.h, outsize_.w})};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override;

 private:
  Pool2dGeometry geometry_;
  Int2 outsize_;
};

// Input gy (N, C, oh, ow) -> gx of shape `shape`: average pooling's adjoint.
class AveragePooling2DGrad final : public FunctionNode {
 public:
  AveragePooling2DGrad(const Pool2dGeometry& geometry, Shape shape) : geometry_(geometry), shape_(std::move(shape)) {}
  std::string label() const override { return "AveragePooling2DGrad"; }
  std::vector<Array> forward(const std::vector<Array>& in) override {
    return {ops::average_pooling_2d_backward(in[0], geometry_, shape_)};
  }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& ggx) override {
    const Shape& gy = inputs()[0]->shape;
    return {apply_single<AveragePooling2D>({ggx[0]}, geometry_, Int2{gy[2], gy[3]})};
  }

 private:
  Pool2dGeometry geometry_;
  Shape shape_;
};

std::vector<Variable> AveragePooling2D::backward(const std::vector<size_t>&, const std::vector<Variable>& gy) {
  return {apply_single<AveragePooling2DGrad>({gy[0]}, geometry_, inputs()[0]->shape)};
}

// Checks x and the window arguments of pooling `op` and returns the output extents.
Int2 pooled_extents(const char* op, const Variable& x, const Int2& ksize, const Int2& stride, const Int2& pad,
                    bool cover_all) {
  require_nchw(x, op, "x");
  require_at_least(ksize, 1, op, "ksize");
  require_at_least(stride, 1, op, "stride");
  require_at_least(pad, 0, op, "pad");
  const Int2 out{conv_outsize(x.shape()[2], ksize.h, stride.h, pad.h, 1, cover_all),
                 conv_outsize(x.shape()[3], ksize.w, stride.w, pad.w, 1, cover_all)};
  if (out.h < 1 || out.w < 1) {
    throw ShapeError(cat(op, ": the window ", ksize, " is larger than the padded input ",
                         Int2{x.shape()[2] + 2 * pad.h, x.shape()[3] + 2 * pad.w}, " of x ", x.shape()));
  }
  return out;
}

Pool2dGeometry geometry_of(const Int2& ksize, const Int2& stride, const Int2& pad) {
  return {ksize.h, ksize.w, stride.h, stride.w, pad.h, pad.w};
}

}  // namespace

Variable max_pooling_2d(const Variable& x, Int2 ksize) { return max_pooling_2d(x, ksize, ksize); }

Variable max_pooling_2d(const Variable& x, Int2 ksize, Int2 stride, Int2 pad, bool cover_all) {
  const Int2 out = pooled_extents("max_pooling_2d", x, ksize, stride, pad, cover_all);
  return apply_single<MaxPooling2D>({x}, geometry_of(ksize, stride, pad), out);
}

Variable average_pooling_2d(const Variable& x, Int2 ksize) { return average_pooling_2d(x, ksize, ksize); }

Variable average_pooling_2d(const Variable& x, Int2 ksize, Int2 stride, Int2 pad) {
  const Int2 out = pooled_extents("average_pooling_2d", x, ksize, stride, pad, false);
  return apply_single<AveragePooling2D>({x}, geometry_of(ksize, stride, pad), out);
}

Variable global_average_pooling_2d(const Variable& x) {
  require_nchw(x, "global_average_pooling_2d", "x");
  if (x.shape()[2] * x.shape()[3] == 0) {
    throw ShapeError(cat("global_average_pooling_2d: expected non-empty spatial axes, got x ", x.shape()));
  }
  return mean(x, {2, 3});
}

}  // namespace kusari::functions
