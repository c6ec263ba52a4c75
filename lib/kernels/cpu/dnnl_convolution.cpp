// The plain layouts (NCHW, OIHW) go straight to oneDNN for 1x1 kernels, where the convolution is already
// one GEMM per image and reordering would cost more than it saves, and for the data gradient of inputs of
// few channels; everything else runs in the blocked layouts oneDNN picks (format_tag::any), reordered
// on the way in and out, which measured two to four times faster for 3x3 kernels on AVX-512.

#include <kusari/kernels/cpu/dnnl_convolution.h>

#include <algorithm>

#include <kusari/core/parallel.h>
#include <kusari/kernels/cpu/dnnl_plan_cache.h>
#include <kusari/kernels/cpu/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Which primitive a plan runs.
enum class Pass : int64_t { forward, backward_data, backward_filter };

// Input channels below which the data gradient runs in the plain layout.
constexpr int64_t kFewChannels = 16;

memory::desc plain_desc(const memory::dims& dims, Tag tag) { return memory::desc(dims, memory::data_type::f32, tag); }

// One convolution in oneDNN's terms: plain descriptors of x (N, C, H, W), w (grouped as (G, O/G, C/G,
// kh, kw) when G > 1), y and b, and its geometry, with dilation counted from 0 and the right/bottom
// padding that gives y's extents (cover_all adds some).
class ConvProblem {
 public:
  ConvProblem(Pass pass, const Shape& x, const Shape& w, const Shape& y, const Conv2dGeometry& g, bool bias)
      : pass_(pass),
        x_(plain_desc({x[0], x[1], x[2], x[3]}, Tag::nchw)),
        w_(g.groups == 1 ? plain_desc({w[0], w[1], w[2], w[3]}, Tag::oihw)
                         : plain_desc({g.groups, w[0] / g.groups, w[1], w[2], w[3]}, Tag::goihw)),
        y_(plain_desc({y[0], y[1], y[2], y[3]}, Tag::nchw)),
        b_(bias ? plain_desc({w[0]}, Tag::x) : memory::desc()),
        strides_{g.stride_h, g.stride_w},
        dilates_{g.dilation_h - 1, g.dilation_w - 1},
        pad_l_{g.pad_h, g.pad_w},
        pad_r_{end_padding(x[2], w[2], y[2], g.stride_h, g.pad_h, g.dilation_h),
               end_padding(x[3], w[3], y[3], g.stride_w, g.pad_w, g.dilation_w)},
        plain_((w[2] == 1 && w[3] == 1) || (pass == Pass::backward_data && x[1] < kFewChannels)),
        key_{static_cast<int64_t>(pass), plain_, bias, get_num_threads(), x[0], x[1], x[2], x[3], w[0], w[1], w[2],
             w[3], y[2], y[3], g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w, g.groups} {}

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
      const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, chosen(x_), chosen(w_),
                                                       chosen(y_), strides_, dilates_, pad_l_, pad_r_);
      const dnnl::convolution_backward_data::primitive_desc pd(desc, plan_attributes(), dnnl_engine(), forward());
      return DnnlPlan(pd, {{DNNL_ARG_DIFF_DST, y_}, {DNNL_ARG_WEIGHTS, w_}, {DNNL_ARG_DIFF_SRC, x_, true}});
    }
    const dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, chosen(x_), chosen(w_),
                                                        chosen(y_), strides_, dilates_, pad_l_, pad_r_);
    const dnnl::convolution_backward_weights::primitive_desc pd(desc, plan_attributes(), dnnl_engine(), forward());
    return DnnlPlan(pd, {{DNNL_ARG_SRC, x_}, {DNNL_ARG_DIFF_DST, y_}, {DNNL_ARG_DIFF_WEIGHTS, w_, true}});
  }

 private:
  // The padding after the last input element that makes `out` windows: the smallest that is not
  // negative and keeps oneDNN's output-extent formula equal to `out`.
  static int64_t end_padding(int64_t in, int64_t kernel, int64_t out, int64_t stride, int64_t pad, int64_t dilation) {
    return std::max<int64_t>(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - in - pad);
  }
  // `plain` itself, or the same extents in whatever layout oneDNN prefers.
  memory::desc chosen(const memory::desc& plain) const {
    return plain_ ? plain : memory::desc(plain.dims(), memory::data_type::f32, Tag::any);
  }
  // The forward primitive description (the hint that the backward passes are made from).
  dnnl::convolution_forward::primitive_desc forward(const dnnl::primitive_attr& attributes = {}) const {
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                               chosen(x_), chosen(w_), b_, chosen(y_), strides_, dilates_, pad_l_,
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

// Adds b[c] to every element of channel c of contiguous float32 NCHW `image`, planes over the thread pool.
void add_channel_bias(const Array& b, const Array& images) {
  const int64_t channels = images.shape()[1], plane = images.shape()[2] * images.shape()[3];
  const float* bias = static_cast<const float*>(b.raw_data());
  float* data = static_cast<float*>(images.raw_data());
  parallel_for(images.shape()[0] * channels, kGrain / std::max<int64_t>(plane, 1), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const float value = bias[p % channels];
      for (int64_t i = 0; i < plane; ++i) data[p * plane + i] += value;
    }
  });
}

}  // namespace

void dnnl_conv2d(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& geometry, const Array& y) {
  const ConvProblem problem(Pass::forward, x.shape(), w.shape(), y.shape(), geometry, b.defined());
  run(problem, b.defined() ? std::vector<Array>{x, w, b, y} : std::vector<Array>{x, w, y});
}

void dnnl_conv2d_backward_data(const Array& gy, const Array& w, const Array& b, const Conv2dGeometry& geometry,
                               const Array& gx) {
  run(ConvProblem(Pass::backward_data, gx.shape(), w.shape(), gy.shape(), geometry, false), {gy, w, gx});
  if (b.defined()) add_channel_bias(b, gx);
}

void dnnl_conv2d_backward_filter(const Array& x, const Array& gy, const Conv2dGeometry& geometry, const Array& gw) {
  run(ConvProblem(Pass::backward_filter, x.shape(), gw.shape(), gy.shape(), geometry, false), {x, gy, gw});
}

}  // namespace kusari::kernels::cpu
