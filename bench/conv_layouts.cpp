// oneDNN convolutions on the shapes of ResNet-20 (batch 128, 28x28) and ResNet-50 (batch 16,
// 224x224), each pass (forward "fwd", data gradient "bwd_data", filter gradient "bwd_filter") in two
// layouts: "nhwc", activations in channels-last memory computed natively (how kusari runs them), and
// "blocked_reorder", the blocked layouts oneDNN picks with every activation reordered from and to plain
// NCHW on each call (how kusari ran kernels larger than 1x1 before; 1x1 ones ran in plain NCHW).
// Weights are OIHW for the caller in both, reordered into the layout oneDNN picks. Prints
// "<shape>_<pass>_<layout>: X ms/step, Y samples/s" (samples = images).
// Flags as every bench program, plus an optional last argument: only shapes whose name contains it.

#include <cstring>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "train_bench.h"

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// One convolution: batch, input channels, input extent (square), output channels, kernel, stride; the
// padding is kernel / 2 as in both ResNets.
struct ConvShape {
  const char* name;
  int64_t batch, in, extent, out, kernel, stride;
};

const ConvShape kShapes[] = {
    {"r20_stem_c1", 128, 1, 28, 16, 3, 1},         {"r20_c16_28", 128, 16, 28, 16, 3, 1},
    {"r20_c16to32_s2", 128, 16, 28, 32, 3, 2},     {"r20_c32_14", 128, 32, 14, 32, 3, 1},
    {"r20_c32to64_s2", 128, 32, 14, 64, 3, 2},     {"r20_c64_7", 128, 64, 7, 64, 3, 1},
    {"r20_1x1_c16to32_s2", 128, 16, 28, 32, 1, 2}, {"r20_1x1_c32to64_s2", 128, 32, 14, 64, 1, 2},
    {"r50_stem", 16, 3, 224, 64, 7, 2},            {"r50_1x1_c64_56", 16, 64, 56, 64, 1, 1},
    {"r50_c64_56", 16, 64, 56, 64, 3, 1},          {"r50_1x1_c64to256_56", 16, 64, 56, 256, 1, 1},
    {"r50_1x1_c256to64_56", 16, 256, 56, 64, 1, 1}, {"r50_c128_s2", 16, 128, 56, 128, 3, 2},
    {"r50_c128_28", 16, 128, 28, 128, 3, 1},       {"r50_1x1_c512to128_28", 16, 512, 28, 128, 1, 1},
    {"r50_1x1_c256to512_s2", 16, 256, 56, 512, 1, 2}, {"r50_c256_14", 16, 256, 14, 256, 3, 1},
    {"r50_1x1_c1024to256_14", 16, 1024, 14, 256, 1, 1}, {"r50_c512_7", 16, 512, 7, 512, 3, 1},
    {"r50_1x1_c2048to512_7", 16, 2048, 7, 512, 1, 1},
};

const dnnl::engine& engine() {
  static const dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
  return cpu;
}

memory::desc desc(const memory::dims& dims, Tag tag) { return memory::desc(dims, memory::data_type::f32, tag); }

// A primitive bound to caller-layout buffers, with the reorders into and out of its own layouts.
class BoundPrimitive {
 public:
  // operands: (execution argument, the caller's layout, whether the primitive writes it).
  struct Operand {
    int arg;
    memory::desc caller;
    bool output;
  };

  BoundPrimitive(const dnnl::primitive_desc& pd, const std::vector<Operand>& operands) : primitive_(pd) {
    for (const Operand& o : operands) {
      const memory::desc inner = pd.query_md(dnnl::query::exec_arg_md, o.arg);
      memory caller = buffer(o.caller);
      if (inner == o.caller) {
        arguments_.emplace(o.arg, caller);
        continue;
      }
      memory own = buffer(inner);
      arguments_.emplace(o.arg, own);
      if (o.output) {
        after_.push_back({dnnl::reorder(own, caller), own, caller});
      } else {
        before_.push_back({dnnl::reorder(caller, own), caller, own});
      }
    }
    arguments_.emplace(DNNL_ARG_SCRATCHPAD, buffer(pd.scratchpad_desc()));
  }

  // Runs the reorders in, the primitive and the reorders out, and waits for them.
  void run(dnnl::stream& stream) {
    for (Reorder& r : before_) r.primitive.execute(stream, r.from, r.to);
    primitive_.execute(stream, arguments_);
    for (Reorder& r : after_) r.primitive.execute(stream, r.from, r.to);
    stream.wait();
  }

 private:
  struct Reorder {
    dnnl::reorder primitive;
    memory from, to;
  };
  // A memory of `d` over a zero-filled buffer that this object keeps.
  memory buffer(const memory::desc& d) {
    buffers_.emplace_back(d.get_size() / sizeof(float) + 1, 0.0f);
    return memory(d, engine(), buffers_.back().data());
  }

  dnnl::primitive primitive_;
  std::vector<std::vector<float>> buffers_;  // a vector of vectors: the data stays put as it grows
  std::unordered_map<int, memory> arguments_;
  std::vector<Reorder> before_, after_;
};

// The pass `pass` (0 forward, 1 data gradient, 2 filter gradient) of `s`, with activations computed in
// nhwc (caller nhwc) or in oneDNN's choice (caller nchw).
BoundPrimitive bind(const ConvShape& s, int pass, bool nhwc) {
  const int64_t pad = s.kernel / 2, out_extent = (s.extent + 2 * pad - s.kernel) / s.stride + 1;
  const memory::dims x{s.batch, s.in, s.extent, s.extent}, w{s.out, s.in, s.kernel, s.kernel};
  const memory::dims y{s.batch, s.out, out_extent, out_extent};
  const memory::dims strides{s.stride, s.stride}, dilation{0, 0}, padding{pad, pad};
  const Tag computed = nhwc ? Tag::nhwc : Tag::any, caller = nhwc ? Tag::nhwc : Tag::nchw;
  const memory::desc xc = desc(x, computed), wc = desc(w, Tag::any), yc = desc(y, computed);
  const memory::desc xu = desc(x, caller), wu = desc(w, Tag::oihw), yu = desc(y, caller);
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const dnnl::convolution_forward::primitive_desc forward(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, xc, wc, memory::desc(), yc, strides,
       dilation, padding, padding},
      attributes, engine());
  if (pass == 0) return BoundPrimitive(forward, {{DNNL_ARG_SRC, xu, false}, {DNNL_ARG_WEIGHTS, wu, false},
                                                 {DNNL_ARG_DST, yu, true}});
  if (pass == 1) {
    const dnnl::convolution_backward_data::primitive_desc pd(
        {dnnl::algorithm::convolution_direct, xc, wc, yc, strides, dilation, padding, padding}, attributes, engine(),
        forward);
    return BoundPrimitive(pd, {{DNNL_ARG_DIFF_DST, yu, false}, {DNNL_ARG_WEIGHTS, wu, false},
                               {DNNL_ARG_DIFF_SRC, xu, true}});
  }
  const dnnl::convolution_backward_weights::primitive_desc pd(
      {dnnl::algorithm::convolution_direct, xc, wc, yc, strides, dilation, padding, padding}, attributes, engine(),
      forward);
  return BoundPrimitive(pd, {{DNNL_ARG_SRC, xu, false}, {DNNL_ARG_DIFF_DST, yu, false},
                             {DNNL_ARG_DIFF_WEIGHTS, wu, true}});
}

}  // namespace

int main(int argc, char** argv) {
  const char* filter = argc % 2 == 0 ? argv[argc - 1] : "";  // flags come in pairs after the program name
  const kusari::bench::Options options =
      kusari::bench::setup(argc - (*filter ? 1 : 0), argv, {.warmup = 2, .min_steps = 3, .seconds = 0.3});
  dnnl::stream stream(engine());
  const char* passes[] = {"fwd", "bwd_data", "bwd_filter"};
  for (const ConvShape& s : kShapes) {
    if (std::strstr(s.name, filter) == nullptr) continue;
    for (int pass = 0; pass < 3; ++pass) {
      if (pass == 1 && s.in < 16) continue;  // a network's first layer needs no data gradient
      for (const bool nhwc : {true, false}) {
        BoundPrimitive bound = bind(s, pass, nhwc);
        kusari::bench::time_steps(kusari::cat(s.name, "_", passes[pass], nhwc ? "_nhwc" : "_blocked_reorder"),
                                  s.batch, [&] { bound.run(stream); }, options);
      }
    }
  }
}
