// Activations are read and written in the caller's memory order (row-major NCHW or channels-last), and
// oneDNN computes in channels-last (format_tag::nhwc), which its AVX-512 kernels run natively for every
// kernel size: channels-last operands go straight in and out, row-major ones are reordered. Weights stay
// OIHW for the caller and are reordered into the layout oneDNN picks (format_tag::any). The data
// gradient of an input of few channels runs in plain NCHW/OIHW, where the channels-last kernels are slow.
// Measured against the blocked layouts with reorders to and from NCHW on both ResNets' shapes, the
// channels-last convolutions themselves take about as long as the blocked ones, and no reorder is left.

#include <kusari/kernels/cpu/detail/dnnl_convolution.h>

#include <algorithm>

#include <kusari/core/memory_order.h>
#include <kusari/core/parallel.h>
#include <kusari/kernels/cpu/detail/dnnl_plan_cache.h>
#include <kusari/kernels/cpu/detail/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Which primitive a plan runs.
enum class Pass : int64_t { forward, backward_data, backward_filter };

// Input channels below which the data gradient runs in the plain layout.
constexpr int64_t kFewChannels = 16;

memory::desc plain_desc(const memory::dims& dims, Tag tag) { return memory::desc(dims, memory::data_type::f32, tag); }

// The oneDNN description of an (N, C, H, W) activation in the caller's memory order.
memory::desc activation_desc(const Shape& shape, bool channels_last) {
  return plain_desc({shape[0], shape[1], shape[2], shape[3]}, channels_last ? Tag::nhwc : Tag::nchw);
}

// One convolution in oneDNN's terms: the caller's descriptors of x (N, C, H, W), w (grouped as (G, O/G,
// C/G, kh, kw) when G > 1), y and b, and its geometry, with dilation counted from 0 and the right/bottom
// padding that gives y's extents (cover_all adds some). x_channels_last and y_channels_last give the
// memory orders of x (or gx) and y (or gy).
class ConvProblem {
 public:
  ConvProblem(Pass pass, const Shape& x, const Shape& w, const Shape& y, const Conv2dGeometry& g, bool bias,
              bool x_channels_last, bool y_channels_last)
      : pass_(pass),
        x_(activation_desc(x, x_channels_last)),
        w_(g.groups == 1 ? plain_desc({w[0], w[1], w[2], w[3]}, Tag::oihw)
                         : plain_desc({g.groups, w[0] / g.groups, w[1], w[2], w[3]}, Tag::goihw)),
        y_(activation_desc(y, y_channels_last)),
        b_(bias ? plain_desc({w[0]}, Tag::x) : memory::desc()),
        strides_{g.stride_h, g.stride_w},
        dilates_{g.dilation_h - 1, g.dilation_w - 1},
        pad_l_{g.pad_h, g.pad_w},
        pad_r_{end_padding(x[2], w[2], y[2], g.stride_h, g.pad_h, g.dilation_h),
               end_padding(x[3], w[3], y[3], g.stride_w, g.pad_w, g.dilation_w)},
        plain_(pass == Pass::backward_data && x[1] < kFewChannels),
        key_{static_cast<int64_t>(pass), bias, x_channels_last, y_channels_last, get_num_threads(), x[0], x[1], x[2],
             x[3], w[0], w[1], w[2], w[3], y[2], y[3], g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h,
             g.dilation_w, g.groups} {}

  // What the plan is cached under.
  const PlanKey& key() const { return key_; }

  // The plan of this problem's pass, operands in the order x, w, b, y (forward), gy, w, gx (backward
  // data) or x, gy, gw (backward filter).
  DnnlPlan plan() const {
    if (pass_ == Pass::forward) {
      const auto pd = forward(plan_attributes());
      if (b_.is_zero()) return DnnlPlan(pd, {{DNNL_ARG_SRC, x_}, {DNNL_ARG_WEIGHTS, w_}, {DNNL_ARG_DST, y_, true}});
      return DnnlPlan(pd, {{DNNL_ARG_SRC, x_}, {DNNL_ARG_WEIGHTS, w_}, {DNNL_ARG_BIAS, b_}, {DNNL_ARG_DST, y_, true}});
    }
    if (pass_ == Pass::backward_data) {
      const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, computed(x_),
                                                       weights(), computed(y_), strides_, dilates_, pad_l_, pad_r_);
      const dnnl::convolution_backward_data::primitive_desc pd(desc, plan_attributes(), dnnl_engine(), forward());
      return DnnlPlan(pd, {{DNNL_ARG_DIFF_DST, y_}, {DNNL_ARG_WEIGHTS, w_}, {DNNL_ARG_DIFF_SRC, x_, true}});
    }
    const dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, computed(x_), weights(),
                                                        computed(y_), strides_, dilates_, pad_l_, pad_r_);
    const dnnl::convolution_backward_weights::primitive_desc pd(desc, plan_attributes(), dnnl_engine(), forward());
    return DnnlPlan(pd, {{DNNL_ARG_SRC, x_}, {DNNL_ARG_DIFF_DST, y_}, {DNNL_ARG_DIFF_WEIGHTS, w_, true}});
  }

 private:
  // The padding after the last input element that makes `out` windows: the smallest that is not
  // negative and keeps oneDNN's output-extent formula equal to `out`.
  static int64_t end_padding(int64_t in, int64_t kernel, int64_t out, int64_t stride, int64_t pad, int64_t dilation) {
    return std::max<int64_t>(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - in - pad);
  }
  // The layout an activation is computed in: channels-last, or NCHW for a plain problem.
  memory::desc computed(const memory::desc& activation) const {
    return plain_desc(activation.dims(), plain_ ? Tag::nchw : Tag::nhwc);
  }
  // The weights' layout: the caller's for a plain problem, whatever oneDNN prefers otherwise.
  memory::desc weights() const { return plain_ ? w_ : memory::desc(w_.dims(), memory::data_type::f32, Tag::any); }
  // The forward primitive description (the hint that the backward passes are made from).
  dnnl::convolution_forward::primitive_desc forward(const dnnl::primitive_attr& attributes = {}) const {
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                               computed(x_), weights(), b_, computed(y_), strides_, dilates_, pad_l_,
                                               pad_r_);
    return {desc, attributes, dnnl_engine()};
  }

  Pass pass_;
  memory::desc x_, w_, y_, b_;
  memory::dims strides_, dilates_, pad_l_, pad_r_;
  bool plain_;
  PlanKey key_;
};

// Runs `problem`'s cached plan on the given arrays.
void run(const ConvProblem& problem, const std::vector<Array>& operands) {
  std::vector<void*> data;
  for (const Array& a : operands) data.push_back(a.raw_data());
  cached_plan(problem.key(), [&] { return problem.plan(); })->execute(data);
}

// Adds b[c] to every element of channel c of float32 `images` (N, C, H, W), row-major or channels-last,
// over the thread pool.
void add_channel_bias(const Array& b, const Array& images) {
  const int64_t channels = images.shape()[1], plane = images.shape()[2] * images.shape()[3];
  const float* bias = static_cast<const float*>(b.raw_data());
  float* data = static_cast<float*>(images.raw_data());
  if (memory_order_of(images) == MemoryOrder::channels_last) {
    parallel_for(images.shape()[0] * plane, kGrain / std::max<int64_t>(channels, 1), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        for (int64_t c = 0; c < channels; ++c) data[p * channels + c] += bias[c];
      }
    });
    return;
  }
  parallel_for(images.shape()[0] * channels, kGrain / std::max<int64_t>(plane, 1), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const float value = bias[p % channels];
      for (int64_t i = 0; i < plane; ++i) data[p * plane + i] += value;
    }
  });
}

}  // namespace

void dnnl_conv2d(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& geometry, const Array& y) {
  const ConvProblem problem(Pass::forward, x.shape(), w.shape(), y.shape(), geometry, b.defined(),
                            is_channels_last(x), is_channels_last(y));
  run(problem, b.defined() ? std::vector<Array>{x, w, b, y} : std::vector<Array>{x, w, y});
}

void dnnl_conv2d_backward_data(const Array& gy, const Array& w, const Array& b, const Conv2dGeometry& geometry,
                               const Array& gx) {
  run(ConvProblem(Pass::backward_data, gx.shape(), w.shape(), gy.shape(), geometry, false, is_channels_last(gx),
                  is_channels_last(gy)),
      {gy, w, gx});
  if (b.defined()) add_channel_bias(b, gx);
}

void dnnl_conv2d_backward_filter(const Array& x, const Array& gy, const Conv2dGeometry& geometry, const Array& gw) {
  run(ConvProblem(Pass::backward_filter, x.shape(), gw.shape(), gy.shape(), geometry, false, is_channels_last(x),
                  is_channels_last(gy)),
      {x, gy, gw});
}

}  // namespace kusari::kernels::cpu
