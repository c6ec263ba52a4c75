// CUDA 2-D convolution through cuDNN: forward, data gradient and filter gradient. Each pass runs in the
// memory order detail/convolution_plan.h chooses for its image operand (channels-last images stay so,
// but in float64), the other operands and the filter brought to it, and its output in it (the filter
// gradient then row-major, as the contract asks). A geometry whose extents cuDNN's formula does not map
// (cover_all, a deconvolution's outsize) runs at the extents convolution_plan.h gives: operands
// extended by zeros, the output cropped. float64 and float32 compute in their own precision (no TF32);
// float16 and bfloat16 on the tensor cores, accumulating in float32. Each shape's algorithm is chosen once per
// device, by cuDNN's heuristics or, with cuda::set_cudnn_benchmark(true) or KUSARI_CUDNN_BENCHMARK=1, by timing them
// (cudnnFind...Ex), and kept.

#include <array>
#include <map>
#include <tuple>
#include <vector>

#include <kusari/core/kernel_table.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/convolution_plan.h>
#include <kusari/kernels/cuda/detail/dnn.h>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/cuda/runtime.h>
#include <kusari/kernels/ops/convolution.h>
#include <kusari/kernels/routines.h>

namespace kusari::kernels::cuda {
namespace {

constexpr const char* kOp = "conv2d";

// The three computations a plan is for.
enum class Pass { forward, backward_data, backward_filter };

// What identifies a plan: the pass, dtype, the three operands' extents and strides (the filter's as
// its format), the geometry.
using PlanKey = std::tuple<Pass, Dtype, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>, bool,
                           std::array<int64_t, 7>>;

// The algorithm chosen for a plan (one of cuDNN's three enums, as an int) and its workspace.
struct Plan {
  int algorithm = 0;
  size_t workspace = 0;
};

// Each device's plans, read and written under its DnnLock.
std::map<PlanKey, Plan>& plans_of(int index) {
  static std::array<std::map<PlanKey, Plan>, kMaxDevices> all;
  return all[static_cast<size_t>(index)];
}

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

// An array's extents then strides, for a plan's key.
std::vector<int64_t> layout_key(const Array& a) {
  std::vector<int64_t> key(a.shape().begin(), a.shape().end());
  key.insert(key.end(), a.strides().begin(), a.strides().end());
  return key;
}

// The workspace the timing search may use.
constexpr size_t kSearchWorkspace = size_t{256} << 20;

// The first of cuDNN's ranked results that succeeded and needs at most `limit` bytes of workspace
// (the heuristics' list or the timed one).
template <class Result>
Plan first_usable(const Result* results, int count, size_t limit, const char* what) {
  for (int i = 0; i < count; ++i) {
    if (results[i].status == CUDNN_STATUS_SUCCESS && results[i].memory <= limit) {
      return {static_cast<int>(results[i].algo), results[i].memory};
    }
  }
  throw DeviceError(
      cat(what, ": cuDNN found no algorithm for this shape and layout within ", limit, " bytes of workspace"));
}

// Half the device memory free now: the most workspace a plan may take.
size_t workspace_limit() {
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free / 2;
}

// The operands of one pass, with the descriptors the calls take.
struct Operands {
  const Array& x;  // the image-shaped input (x, or gy for the data gradient)
  const Array& w;  // the filter (the filter gradient's output for that pass)
  const Array& y;  // the image-shaped output (y, gx, or gy for the filter gradient)
  const TensorDescriptor& x_desc;
  const FilterDescriptor& w_desc;
  const TensorDescriptor& y_desc;
  const ConvolutionDescriptor& conv;
};

// The plan of one pass on these operands: cuDNN's heuristics' first usable algorithm, or when `timed`
// the fastest of cuDNN's timed candidates.
Plan choose(cudnnHandle_t handle, Pass pass, const Operands& o, bool timed) {
  constexpr int kMost = 16;
  int count = 0;
  const size_t limit = workspace_limit();
  const size_t search_bytes = std::min(kSearchWorkspace, limit / 2);
  Array search;  // the timing search's workspace
  if (timed) search = Array::empty({static_cast<int64_t>(std::max<size_t>(search_bytes, 1))}, Dtype::uint8, o.x.device());
  void* space = timed ? search.raw_data() : nullptr;
  switch (pass) {
    case Pass::forward: {
      cudnnConvolutionFwdAlgoPerf_t found[kMost];
      check_dnn(timed ? cudnnFindConvolutionForwardAlgorithmEx(handle, o.x_desc.d, o.x.raw_data(), o.w_desc.d,
                                                               o.w.raw_data(), o.conv.d, o.y_desc.d, o.y.raw_data(),
                                                               kMost, &count, found, space, search_bytes)
                      : cudnnGetConvolutionForwardAlgorithm_v7(handle, o.x_desc.d, o.w_desc.d, o.conv.d, o.y_desc.d,
                                                               kMost, &count, found),
                "choosing a convolution algorithm");
      return first_usable(found, count, timed ? search_bytes : limit, kOp);
    }
    case Pass::backward_data: {
      cudnnConvolutionBwdDataAlgoPerf_t found[kMost];
      // The data gradient reads gy (o.x, with the output's descriptor) and writes gx (o.y).
      check_dnn(timed ? cudnnFindConvolutionBackwardDataAlgorithmEx(
                            handle, o.w_desc.d, o.w.raw_data(), o.x_desc.d, o.x.raw_data(), o.conv.d, o.y_desc.d,
                            o.y.raw_data(), kMost, &count, found, space, search_bytes)
                      : cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, o.w_desc.d, o.x_desc.d, o.conv.d,
                                                                    o.y_desc.d, kMost, &count, found),
                "choosing a convolution algorithm");
      return first_usable(found, count, timed ? search_bytes : limit, "conv2d_backward_data");
    }
    case Pass::backward_filter: {
      cudnnConvolutionBwdFilterAlgoPerf_t found[kMost];
      // The filter gradient reads x (o.x) and gy (o.y) and writes gw (o.w).
      check_dnn(timed ? cudnnFindConvolutionBackwardFilterAlgorithmEx(
                            handle, o.x_desc.d, o.x.raw_data(), o.y_desc.d, o.y.raw_data(), o.conv.d, o.w_desc.d,
                            o.w.raw_data(), kMost, &count, found, space, search_bytes)
                      : cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, o.x_desc.d, o.y_desc.d, o.conv.d,
                                                                      o.w_desc.d, kMost, &count, found),
                "choosing a convolution algorithm");
      return first_usable(found, count, timed ? search_bytes : limit, "conv2d_backward_filter");
    }
  }
  throw ValueError("conv2d: unknown pass");
}

// Runs one pass: chooses (or finds the kept) plan, then calls cuDNN with a workspace from the cache.
void run_pass(Pass pass, const Array& x, const Array& w, const Array& y, const Conv2dGeometry& g,
              bool w_channels_last) {
  const Device device = x.device();
  const Dtype dtype = x.dtype();
  const cudnnDataType_t type = dnn_type(dtype, kOp);
  DeviceGuard guard(device.index);
  const TensorDescriptor x_desc(x, type, kOp), y_desc(y, type, kOp);
  const FilterDescriptor w_desc(w, type, w_channels_last);
  const ConvolutionDescriptor conv(g, dtype);
  const Operands o{x, w, y, x_desc, w_desc, y_desc, conv};
  // One handle is not to be used by two threads at once: the lock covers the plan and the calls.
  const DnnLock dnn(device.index);
  std::map<PlanKey, Plan>& plans = plans_of(device.index);
  const PlanKey key{pass, dtype, layout_key(x), layout_key(w), layout_key(y), w_channels_last,
                    {g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w, g.groups}};
  auto it = plans.find(key);
  if (it == plans.end()) it = plans.emplace(key, choose(dnn.handle(), pass, o, kusari::cuda::cudnn_benchmark())).first;
  const Plan plan = it->second;
  const Array workspace =
      Array::empty({static_cast<int64_t>(std::max<size_t>(plan.workspace, 1))}, Dtype::uint8, device);
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const bool wide = dtype == Dtype::float64;
  const void* one = wide ? static_cast<const void*>(&one64) : &one32;
  const void* zero = wide ? static_cast<const void*>(&zero64) : &zero32;
  switch (pass) {
    case Pass::forward:
      check_dnn(cudnnConvolutionForward(dnn.handle(), one, x_desc.d, x.raw_data(), w_desc.d, w.raw_data(), conv.d,
                                        static_cast<cudnnConvolutionFwdAlgo_t>(plan.algorithm), workspace.raw_data(),
                                        plan.workspace, zero, y_desc.d, y.raw_data()),
                "cudnnConvolutionForward");
      break;
    case Pass::backward_data:
      check_dnn(cudnnConvolutionBackwardData(dnn.handle(), one, w_desc.d, w.raw_data(), x_desc.d, x.raw_data(), conv.d,
                                             static_cast<cudnnConvolutionBwdDataAlgo_t>(plan.algorithm),
                                             workspace.raw_data(), plan.workspace, zero, y_desc.d, y.raw_data()),
                "cudnnConvolutionBackwardData");
      break;
    case Pass::backward_filter:
      check_dnn(cudnnConvolutionBackwardFilter(dnn.handle(), one, x_desc.d, x.raw_data(), y_desc.d, y.raw_data(),
                                               conv.d, static_cast<cudnnConvolutionBwdFilterAlgo_t>(plan.algorithm),
                                               workspace.raw_data(), plan.workspace, zero, w_desc.d, w.raw_data()),
                "cudnnConvolutionBackwardFilter");
      break;
  }
}

// out += b broadcast over every axis but the channel axis (the library's own broadcast add, for every
// dtype alike).
void add_bias(const Array& b, const Array& out) {
  out.assign(ops::add(out, b.astype(out.dtype()).reshape({1, b.size(), 1, 1})));
}

// Throws DeviceError unless every defined operand is on `device` (a CUDA device this process has).
void require_on(const Device& device, std::initializer_list<const Array*> arrays, const char* op) {
  require_device(device, op);
  for (const Array* a : arrays) {
    if (a->defined() && !(a->device() == device)) {
      throw DeviceError(cat(op, ": expected every operand on ", device, ", got one on ", a->device()));
    }
  }
}

// The image and output shapes at which cuDNN runs a pass over `image` with output `output` and filter
// `filter` (dnn_extent on each spatial axis).
std::pair<Shape, Shape> dnn_shapes(const Shape& image, const Shape& output, const Shape& filter,
                                   const Conv2dGeometry& g) {
  const DnnExtent h = dnn_extent(image[2], output[2], filter[2], g.stride_h, g.pad_h, g.dilation_h);
  const DnnExtent w = dnn_extent(image[3], output[3], filter[3], g.stride_w, g.pad_w, g.dilation_w);
  return {Shape{image[0], image[1], h.image, w.image}, Shape{output[0], output[1], h.output, w.output}};
}

// The first `shape[2]` rows and `shape[3]` columns of a (view).
Array corner(const Array& a, const Shape& shape) {
  return a.get_item({Slice{}, Slice{}, Slice{0, shape[2]}, Slice{0, shape[3]}});
}

// a in `order`, extended by zeros past its rows and columns to `shape`.
Array extended(const Array& a, const Shape& shape, MemoryOrder order) {
  if (a.shape() == shape) return in_order(a, order);
  Array out = empty_in_order(shape, order, a.dtype(), a.device());
  out.fill(0.0);
  corner(out, a.shape()).assign(a);
  return out;
}

// Runs the forward or data-gradient pass from `read` into `result`, through an array of `whole_shape`
// cropped to it where cuDNN's extents exceed the result's.
void run_into(Pass pass, const Array& read, const Array& filter, const Array& result, const Shape& whole_shape,
              const Conv2dGeometry& g, MemoryOrder order) {
  const bool channels_last = order == MemoryOrder::channels_last;
  if (whole_shape == result.shape()) {
    run_pass(pass, read, filter, result, g, channels_last);
    return;
  }
  const Array whole = empty_in_order(whole_shape, order, result.dtype(), result.device());
  run_pass(pass, read, filter, whole, g, channels_last);
  result.assign(corner(whole, result.shape()));
}

Array conv2d(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& g, const Shape& y_shape) {
  require_on(x.device(), {&x, &w, &b}, kOp);
  const MemoryOrder order = dnn_pass_order(x);
  const Array filter = in_order(w, order);
  Array y = empty_in_order(y_shape, order, x.dtype(), x.device());
  if (y.size() == 0) return y;
  if (x.size() == 0 || filter.size() == 0) {
    y.fill(0.0);
  } else {
    const auto [image, output] = dnn_shapes(x.shape(), y_shape, w.shape(), g);
    run_into(Pass::forward, extended(x, image, order), filter, y, output, g, order);
  }
  if (b.defined()) add_bias(b, y);
  return y;
}

Array conv2d_backward_data(const Array& gy, const Array& w, const Array& b, const Conv2dGeometry& g,
                           const Shape& gx_shape) {
  require_on(gy.device(), {&gy, &w, &b}, "conv2d_backward_data");
  const MemoryOrder order = dnn_pass_order(gy);
  const Array filter = in_order(w, order);
  Array gx = empty_in_order(gx_shape, order, gy.dtype(), gy.device());
  if (gx.size() == 0) return gx;
  if (gy.size() == 0 || filter.size() == 0) {
    gx.fill(0.0);
  } else {
    const auto [image, output] = dnn_shapes(gx_shape, gy.shape(), w.shape(), g);
    run_into(Pass::backward_data, extended(gy, output, order), filter, gx, image, g, order);
  }
  if (b.defined()) add_bias(b, gx);
  return gx;
}

Array conv2d_backward_filter(const Array& x, const Array& gy, const Conv2dGeometry& g, const Shape& gw_shape) {
  require_on(x.device(), {&x, &gy}, "conv2d_backward_filter");
  const MemoryOrder order = dnn_pass_order(x);
  Array gw = empty_in_order(gw_shape, order, x.dtype(), x.device());
  if (gw.size() == 0) return gw;
  if (x.size() == 0 || gy.size() == 0) {
    gw.fill(0.0);
  } else {
    const auto [image, output] = dnn_shapes(x.shape(), gy.shape(), gw_shape, g);
    run_pass(Pass::backward_filter, extended(x, image, order), gw, extended(gy, output, order), g,
             order == MemoryOrder::channels_last);
  }
  return gw.contiguous();  // the contract's row-major filter gradient
}

}  // namespace

void register_convolution_kernels() {
  install_kernel<kernel_ops::Conv2d>(DeviceType::cuda, "cuda", conv2d);
  install_kernel<kernel_ops::Conv2dBackwardData>(DeviceType::cuda, "cuda", conv2d_backward_data);
  install_kernel<kernel_ops::Conv2dBackwardFilter>(DeviceType::cuda, "cuda", conv2d_backward_filter);
}

}  // namespace kusari::kernels::cuda
