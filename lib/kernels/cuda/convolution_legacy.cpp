// A convolution pass through cuDNN's legacy calls (detail/convolution_legacy.h).

#include <kusari/kernels/cuda/detail/convolution_legacy.h>

#include <algorithm>

#include <kusari/kernels/cuda/detail/dnn.h>

namespace kusari::kernels::cuda {
namespace {

constexpr const char* kOp = "conv2d";

// The descriptor of a packed filter, NCHW or NHWC; destroyed with it.
struct FilterDescriptor {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDescriptor(const Array& w, cudnnDataType_t type, bool channels_last) {
    check_dnn(cudnnCreateFilterDescriptor(&d), "cudnnCreateFilterDescriptor");
    const Shape& s = w.shape();
    check_dnn(cudnnSetFilter4dDescriptor(d, type, channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                         dnn_int(s[0], s, kOp), dnn_int(s[1], s, kOp), dnn_int(s[2], s, kOp),
                                         dnn_int(s[3], s, kOp)),
              "cudnnSetFilter4dDescriptor");
  }
  ~FilterDescriptor() { cudnnDestroyFilterDescriptor(d); }
  FilterDescriptor(const FilterDescriptor&) = delete;
  FilterDescriptor& operator=(const FilterDescriptor&) = delete;
};

// The descriptor of a convolution's geometry, compute type and math; destroyed with it.
struct ConvolutionDescriptor {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvolutionDescriptor(const Conv2dGeometry& g, Dtype dtype) {
    check_dnn(cudnnCreateConvolutionDescriptor(&d), "cudnnCreateConvolutionDescriptor");
    const Shape none{};
    check_dnn(cudnnSetConvolution2dDescriptor(
                  d, dnn_int(g.pad_h, none, kOp), dnn_int(g.pad_w, none, kOp), dnn_int(g.stride_h, none, kOp),
                  dnn_int(g.stride_w, none, kOp), dnn_int(g.dilation_h, none, kOp), dnn_int(g.dilation_w, none, kOp),
                  CUDNN_CROSS_CORRELATION, dtype == Dtype::float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT),
              "cudnnSetConvolution2dDescriptor");
    check_dnn(cudnnSetConvolutionGroupCount(d, dnn_int(g.groups, none, kOp)), "cudnnSetConvolutionGroupCount");
    // The half types on the tensor cores; float32 with plain FMAs, so that TF32 is never used unasked.
    const bool half = dtype == Dtype::float16 || dtype == Dtype::bfloat16;
    check_dnn(cudnnSetConvolutionMathType(d, half ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
              "cudnnSetConvolutionMathType");
  }
  ~ConvolutionDescriptor() { cudnnDestroyConvolutionDescriptor(d); }
  ConvolutionDescriptor(const ConvolutionDescriptor&) = delete;
  ConvolutionDescriptor& operator=(const ConvolutionDescriptor&) = delete;
};

// The legacy calls' descriptors of one pass's operands.
struct Descriptors {
  const TensorDescriptor image, result;
  const FilterDescriptor filter;
  const ConvolutionDescriptor conv;
  explicit Descriptors(const ConvolutionOperands& o)
      : image(o.image, dnn_type(o.image.dtype(), kOp), kOp),
        result(o.result, dnn_type(o.image.dtype(), kOp), kOp),
        filter(o.filter, dnn_type(o.image.dtype(), kOp), o.filter_channels_last),
        conv(o.geometry, o.image.dtype()) {}
};

// The workspace the timing search may use.
constexpr size_t kSearchWorkspace = size_t{256} << 20;

// The first of cuDNN's ranked results that succeeded and needs at most `limit` bytes of workspace
// (the heuristics' list or the timed one).
template <class Result>
LegacyPlan first_usable(const Result* results, int count, size_t limit, const char* what) {
  for (int i = 0; i < count; ++i) {
    if (results[i].status == CUDNN_STATUS_SUCCESS && results[i].memory <= limit) {
      return {static_cast<int>(results[i].algo), results[i].memory};
    }
  }
  throw DeviceError(
      cat(what, ": cuDNN found no algorithm for this shape and layout within ", limit, " bytes of workspace"));
}

}  // namespace

LegacyPlan legacy_plan(cudnnHandle_t handle, ConvolutionPass pass, const ConvolutionOperands& o, bool timed,
                       size_t limit) {
  constexpr int kMost = 16;
  int count = 0;
  const Descriptors d(o);
  const size_t search_bytes = std::min(kSearchWorkspace, limit / 2);
  Array search;  // the timing search's workspace
  if (timed) {
    search = Array::empty({static_cast<int64_t>(std::max<size_t>(search_bytes, 1))}, Dtype::uint8, o.image.device());
  }
  void* space = timed ? search.raw_data() : nullptr;
  const size_t usable = timed ? search_bytes : limit;
  switch (pass) {
    case ConvolutionPass::forward: {
      cudnnConvolutionFwdAlgoPerf_t found[kMost];
      check_dnn(timed ? cudnnFindConvolutionForwardAlgorithmEx(handle, d.image.d, o.image.raw_data(), d.filter.d,
                                                               o.filter.raw_data(), d.conv.d, d.result.d,
                                                               o.result.raw_data(), kMost, &count, found, space,
                                                               search_bytes)
                      : cudnnGetConvolutionForwardAlgorithm_v7(handle, d.image.d, d.filter.d, d.conv.d, d.result.d,
                                                               kMost, &count, found),
                "choosing a convolution algorithm");
      return first_usable(found, count, usable, kOp);
    }
    case ConvolutionPass::backward_data: {
      cudnnConvolutionBwdDataAlgoPerf_t found[kMost];
      check_dnn(timed ? cudnnFindConvolutionBackwardDataAlgorithmEx(
                            handle, d.filter.d, o.filter.raw_data(), d.image.d, o.image.raw_data(), d.conv.d,
                            d.result.d, o.result.raw_data(), kMost, &count, found, space, search_bytes)
                      : cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, d.filter.d, d.image.d, d.conv.d,
                                                                    d.result.d, kMost, &count, found),
                "choosing a convolution algorithm");
      return first_usable(found, count, usable, "conv2d_backward_data");
    }
    case ConvolutionPass::backward_filter: {
      cudnnConvolutionBwdFilterAlgoPerf_t found[kMost];
      check_dnn(timed ? cudnnFindConvolutionBackwardFilterAlgorithmEx(
                            handle, d.image.d, o.image.raw_data(), d.result.d, o.result.raw_data(), d.conv.d,
                            d.filter.d, o.filter.raw_data(), kMost, &count, found, space, search_bytes)
                      : cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, d.image.d, d.result.d, d.conv.d,
                                                                      d.filter.d, kMost, &count, found),
                "choosing a convolution algorithm");
      return first_usable(found, count, usable, "conv2d_backward_filter");
    }
  }
  throw ValueError("conv2d: unknown pass");
}

void run_legacy(cudnnHandle_t handle, ConvolutionPass pass, const ConvolutionOperands& o, const LegacyPlan& plan,
                void* workspace) {
  const Descriptors d(o);
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const bool wide = o.image.dtype() == Dtype::float64;
  const void* one = wide ? static_cast<const void*>(&one64) : &one32;
  const void* zero = wide ? static_cast<const void*>(&zero64) : &zero32;
  switch (pass) {
    case ConvolutionPass::forward:
      check_dnn(cudnnConvolutionForward(handle, one, d.image.d, o.image.raw_data(), d.filter.d, o.filter.raw_data(),
                                        d.conv.d, static_cast<cudnnConvolutionFwdAlgo_t>(plan.algorithm), workspace,
                                        plan.workspace, zero, d.result.d, o.result.raw_data()),
                "cudnnConvolutionForward");
      return;
    case ConvolutionPass::backward_data:
      check_dnn(cudnnConvolutionBackwardData(handle, one, d.filter.d, o.filter.raw_data(), d.image.d,
                                             o.image.raw_data(), d.conv.d,
                                             static_cast<cudnnConvolutionBwdDataAlgo_t>(plan.algorithm), workspace,
                                             plan.workspace, zero, d.result.d, o.result.raw_data()),
                "cudnnConvolutionBackwardData");
      return;
    case ConvolutionPass::backward_filter:
      check_dnn(cudnnConvolutionBackwardFilter(handle, one, d.image.d, o.image.raw_data(), d.result.d,
                                               o.result.raw_data(), d.conv.d,
                                               static_cast<cudnnConvolutionBwdFilterAlgo_t>(plan.algorithm),
                                               workspace, plan.workspace, zero, d.filter.d, o.filter.raw_data()),
                "cudnnConvolutionBackwardFilter");
      return;
  }
}

}  // namespace kusari::kernels::cuda
