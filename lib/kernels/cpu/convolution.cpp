// CPU 2-D convolution: float64 (the gradient checks' precision) by im2col and GEMM (gemm_convolution.h)
// on row-major arrays, every other floating dtype in float32 through oneDNN (dnnl_convolution.h) on
// row-major or channels-last arrays, except the filter gradient of a 1x1 convolution over channels-last
// arrays, one GEMM (pointwise_filter_gradient.h); the half types are converted to float32 and back.

#include <optional>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/convolution.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cpu/detail/dnnl_convolution.h>
#include <kusari/kernels/cpu/detail/gemm_convolution.h>
#include <kusari/kernels/cpu/detail/pointwise_filter_gradient.h>

namespace kusari::kernels::cpu {
namespace {

// `a` itself when its layout is one the compute path takes (row-major; channels-last too for images
// through oneDNN, never for a filter, which oneDNN is given as OIHW), else a row-major copy.
Array in_accepted_order(const Array& a, bool channels_last_accepted) {
  return channels_last_accepted && is_channels_last(a) ? a : a.contiguous();
}

// Runs body(operands, result): the operands are `inputs` converted to the compute dtype (float64 for a
// float64 `out`, float32 otherwise) in an order that path takes (undefined ones stay so; input
// `filter`, when there is one, row-major); the result is `out`, or a buffer of the compute dtype in
// `out`'s memory order copied into it afterwards.
template <class Body>
void compute(const std::vector<Array>& inputs, std::optional<size_t> filter, const Array& out, Body&& body) {
  const Dtype work = out.dtype() == Dtype::float64 ? Dtype::float64 : Dtype::float32;
  const bool channels_last_accepted = work == Dtype::float32;
  std::vector<Array> operands;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Array& a = inputs[i];
    operands.push_back(a.defined() ? in_accepted_order(a.astype(work), channels_last_accepted && i != filter) : a);
  }
  const bool direct =
      out.dtype() == work && (out.is_contiguous() || (channels_last_accepted && is_channels_last(out)));
  const MemoryOrder order = channels_last_accepted ? memory_order_of(out) : MemoryOrder::row_major;
  const Array result = direct ? out : empty_in_order(out.shape(), order, work, out.device());
  body(operands, result);
  if (!direct) out.assign(result);
}

void conv2d_kernel(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& g, const Array& y) {
  compute({x, w, b}, 1, y, [&](const std::vector<Array>& in, const Array& out) {
    (out.dtype() == Dtype::float64 ? gemm_conv2d : dnnl_conv2d)(in[0], in[1], in[2], g, out);
  });
}

void conv2d_backward_data_kernel(const Array& gy, const Array& w, const Array& b, const Conv2dGeometry& g,
                                 const Array& gx) {
  compute({gy, w, b}, 1, gx, [&](const std::vector<Array>& in, const Array& out) {
    (out.dtype() == Dtype::float64 ? gemm_conv2d_backward_data : dnnl_conv2d_backward_data)(in[0], in[1], in[2], g,
                                                                                            out);
  });
}

void conv2d_backward_filter_kernel(const Array& x, const Array& gy, const Conv2dGeometry& g, const Array& gw) {
  compute({x, gy}, std::nullopt, gw, [&](const std::vector<Array>& in, const Array& out) {
    if (out.dtype() == Dtype::float64) return gemm_conv2d_backward_filter(in[0], in[1], g, out);
    if (fits_pointwise_filter_gradient(in[0], in[1], g, out)) return pointwise_filter_gradient(in[0], in[1], g, out);
    dnnl_conv2d_backward_filter(in[0], in[1], g, out);
  });
}

// The CPU's policy: convolutions write their images channels-last, the order oneDNN's float32 path is
// fastest in and the one that keeps ResNet's following batch normalization and ReLU channels-last too.
Array conv2d(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& g, const Shape& y_shape) {
  Array y = empty_in_order(y_shape, MemoryOrder::channels_last, x.dtype(), x.device());
  conv2d_kernel(x, w, b, g, y);
  return y;
}

Array conv2d_backward_data(const Array& gy, const Array& w, const Array& b, const Conv2dGeometry& g,
                           const Shape& gx_shape) {
  Array gx = empty_in_order(gx_shape, MemoryOrder::channels_last, gy.dtype(), gy.device());
  conv2d_backward_data_kernel(gy, w, b, g, gx);
  return gx;
}

Array conv2d_backward_filter(const Array& x, const Array& gy, const Conv2dGeometry& g, const Shape& gw_shape) {
  Array gw = Array::empty(gw_shape, x.dtype(), x.device());
  conv2d_backward_filter_kernel(x, gy, g, gw);
  return gw;
}

}  // namespace

void register_convolution_kernels() {
  install_kernel<kernel_ops::Conv2d>(DeviceType::cpu, "cpu", conv2d);
  install_kernel<kernel_ops::Conv2dBackwardData>(DeviceType::cpu, "cpu", conv2d_backward_data);
  install_kernel<kernel_ops::Conv2dBackwardFilter>(DeviceType::cpu, "cpu", conv2d_backward_filter);
}

}  // namespace kusari::kernels::cpu
