// CUDA 2-D convolution through cuDNN: forward, data gradient and filter gradient. Each pass runs in the
// memory order detail/convolution_plan.h chooses for its image operand (channels-last images stay so,
// but in float64), the other operands and the filter brought to it, and its output in it (the filter
// gradient then row-major, as the contract asks). A geometry whose extents cuDNN's formula does not map
// (cover_all, a deconvolution's outsize) runs at the extents convolution_plan.h gives: operands
// extended by zeros, the output cropped. float64 and float32 compute in their own precision (no TF32);
// float16 and bfloat16 on the tensor cores, accumulating in float32. Each pass is a cuDNN operation graph
// (detail/convolution_engines.h) whose engine is chosen once per shape, layout and alignment on each
// device, and kept: the first of cuDNN's heuristics' ranking that builds within the workspace limit, or,
// with cuda::set_cudnn_benchmark(true) or KUSARI_CUDNN_BENCHMARK=1, the fastest of the first ten, timed.
// Where no engine gives a plan the pass goes through the legacy calls (detail/convolution_legacy.h).

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <kusari/core/kernel_table.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/allocator.h>
#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/convolution_legacy.h>
#include <kusari/kernels/cuda/detail/convolution_plan.h>
#include <kusari/kernels/cuda/detail/dnn.h>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/cuda/detail/streams.h>
#include <kusari/kernels/cuda/runtime.h>
#include <kusari/kernels/ops/convolution.h>
#include <kusari/kernels/routines.h>

namespace kusari::kernels::cuda {
namespace {

constexpr const char* kOp = "conv2d";

// What identifies a plan: the pass, dtype, the three operands' extents and strides (the filter's as
// its format) and data alignments, the geometry.
using PlanKey = std::tuple<ConvolutionPass, Dtype, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>,
                           std::array<int64_t, 3>, std::array<int64_t, 7>>;

// The plan chosen for a pass: an engine's execution plan, or where no engine configuration gave one,
// the legacy calls' algorithm.
struct Plan {
  std::optional<EnginePlan> engine;
  LegacyPlan legacy;
  bool engine_ran = false;  // whether the engine plan has run once (a first run that fails falls back)
};

// Each device's plans, read and written under its DnnLock.
std::map<PlanKey, Plan>& plans_of(int index) {
  static std::array<std::map<PlanKey, Plan>, kMaxDevices> all;
  return all[static_cast<size_t>(index)];
}

// An array's extents then strides, for a plan's key.
std::vector<int64_t> layout_key(const Array& a) {
  std::vector<int64_t> key(a.shape().begin(), a.shape().end());
  key.insert(key.end(), a.strides().begin(), a.strides().end());
  return key;
}

// Half the device memory free now: the most workspace a plan may take.
size_t workspace_limit() {
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free / 2;
}

// A timing event on the device, destroyed with it.
struct TimingEvent {
  cudaEvent_t event = nullptr;
  TimingEvent() { check(cudaEventCreate(&event), "cudaEventCreate"); }
  ~TimingEvent() { cudaEventDestroy(event); }
  TimingEvent(const TimingEvent&) = delete;
  TimingEvent& operator=(const TimingEvent&) = delete;
};

// The milliseconds a plan takes on these operands: run once, then the mean of three runs.
float time_plan(cudnnHandle_t handle, const EnginePlan& plan, const ConvolutionOperands& o) {
  const int index = o.image.device().index;
  const Array workspace = Array::empty({std::max<int64_t>(plan.workspace, 1)}, Dtype::uint8, o.image.device());
  const TimingEvent start, stop;
  run_engine(handle, plan, o, workspace.raw_data());
  constexpr int kRuns = 3;
  check(cudaEventRecord(start.event, current_stream(index)), "cudaEventRecord");
  for (int i = 0; i < kRuns; ++i) run_engine(handle, plan, o, workspace.raw_data());
  check(cudaEventRecord(stop.event, current_stream(index)), "cudaEventRecord");
  check(cudaEventSynchronize(stop.event), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start.event, stop.event), "cudaEventElapsedTime");
  return ms / kRuns;
}

// Each device's properties as cuDNN's heuristics and plans take them, made on first use under its DnnLock.
const BackendDescriptor& device_of(int index, cudnnHandle_t handle) {
  static std::array<std::optional<BackendDescriptor>, kMaxDevices> all;
  std::optional<BackendDescriptor>& device = all[static_cast<size_t>(index)];
  if (!device) device = device_properties(handle);
  return *device;
}

// The engine plan of a pass: the first cuDNN builds from its heuristics' ranking within `limit`, or
// when `timed` the fastest of the timed search's candidates that run (one that fails to run is passed
// over, its error added to `refusals`); nothing where none was built, `refusals` then saying why.
std::optional<EnginePlan> engine_plan(cudnnHandle_t handle, ConvolutionPass pass, const ConvolutionOperands& o,
                                      bool timed, size_t limit, std::string& refusals) {
  const std::vector<EnginePlan> plans =
      engine_plans(convolution_graph(pass, o), o.image.dtype(), device_of(o.image.device().index, handle),
                   static_cast<int64_t>(limit), timed ? EngineSearch::timed : EngineSearch::first, refusals);
  if (!timed) return plans.empty() ? std::nullopt : std::optional<EnginePlan>(plans.front());
  std::optional<EnginePlan> fastest;
  float best = 0;
  for (const EnginePlan& plan : plans) {
    try {
      const float ms = time_plan(handle, plan, o);
      if (!fastest || ms < best) {
        fastest = plan;
        best = ms;
      }
    } catch (const DeviceError& e) {
      add_refusal(refusals, e.what());
    }
  }
  return fastest;
}

// The plans this process took from the legacy calls (legacy_convolution_plans).
std::atomic<int64_t> legacy_count{0};

// The legacy calls' plan of a pass whose engine plan could not be built or run (`why`), said once per
// process on stderr and counted.
Plan legacy_instead(cudnnHandle_t handle, ConvolutionPass pass, const ConvolutionOperands& o, bool timed,
                    const std::string& why) {
  static std::once_flag said;
  std::call_once(said, [&] {
    std::fprintf(stderr, "kusari: conv2d: no cuDNN engine plan for a pass of shape %s (%s); using its legacy calls\n",
                 cat(o.image.shape()).c_str(), why.c_str());
  });
  ++legacy_count;
  return {std::nullopt, legacy_plan(handle, pass, o, timed, workspace_limit())};
}

// The plan of one pass: an engine's (engine_plan), else the legacy calls' (an engine path that fails is
// a defect to see, not a slowdown to miss: legacy_instead says so).
Plan choose(cudnnHandle_t handle, ConvolutionPass pass, const ConvolutionOperands& o, bool timed) {
  std::string refusals;
  try {
    if (std::optional<EnginePlan> engine = engine_plan(handle, pass, o, timed, workspace_limit(), refusals)) {
      return {engine, {}};
    }
  } catch (const DeviceError& e) {
    add_refusal(refusals, e.what());
  }
  return legacy_instead(handle, pass, o, timed, refusals.empty() ? "no engine ranked" : refusals);
}

// A workspace of `bytes` (at least one) from the device's cache.
Array workspace_of(size_t bytes, const Device& device) {
  return Array::empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))}, Dtype::uint8, device);
}

// Runs one pass: chooses (or finds the kept) plan, then runs it with a workspace from the cache; an
// engine plan whose first run fails is replaced by the legacy calls' (legacy_instead).
void run_pass(ConvolutionPass pass, const Array& x, const Array& w, const Array& y, const Conv2dGeometry& g,
              bool w_channels_last) {
  const Device device = x.device();
  DeviceGuard guard(device.index);
  dnn_type(x.dtype(), kOp);  // a floating dtype, else DtypeError naming conv2d
  const ConvolutionOperands o{x, w, y, g, w_channels_last};
  // One handle is not to be used by two threads at once: the lock covers the plan and the calls.
  const DnnLock dnn(device.index);
  std::map<PlanKey, Plan>& plans = plans_of(device.index);
  const PlanKey key{pass,
                    x.dtype(),
                    layout_key(x),
                    layout_key(w),
                    layout_key(y),
                    {byte_alignment(x.raw_data()), byte_alignment(w.raw_data()), byte_alignment(y.raw_data())},
                    {g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w, g.groups}};
  auto it = plans.find(key);
  if (it == plans.end()) {
    const bool timed = kusari::cuda::cudnn_benchmark();
    it = plans.emplace(key, choose(dnn.handle(), pass, o, timed)).first;
    // A timed search's workspaces (each up to half the free memory) go back to the driver, as PyTorch's
    // benchmark mode returns them, instead of staying in the cache for the rest of the run.
    if (timed) cuda_allocator().release_cached();
  }
  Plan& plan = it->second;
  if (plan.engine) {
    // Out of memory for the workspace is not the plan's failure: it propagates.
    const Array workspace = workspace_of(static_cast<size_t>(plan.engine->workspace), device);
    try {
      run_engine(dnn.handle(), *plan.engine, o, workspace.raw_data());
      plan.engine_ran = true;
      return;
    } catch (const DeviceError& e) {
      if (plan.engine_ran) throw;  // a plan that ran before: not the plan's fault
      plan = legacy_instead(dnn.handle(), pass, o, kusari::cuda::cudnn_benchmark(), cat("its first run: ", e.what()));
    }
  }
  run_legacy(dnn.handle(), pass, o, plan.legacy, workspace_of(plan.legacy.workspace, device).raw_data());
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
void run_into(ConvolutionPass pass, const Array& read, const Array& filter, const Array& result,
              const Shape& whole_shape, const Conv2dGeometry& g, MemoryOrder order) {
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
    run_into(ConvolutionPass::forward, extended(x, image, order), filter, y, output, g, order);
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
    run_into(ConvolutionPass::backward_data, extended(gy, output, order), filter, gx, image, g, order);
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
    run_pass(ConvolutionPass::backward_filter, extended(x, image, order), gw, extended(gy, output, order), g,
             order == MemoryOrder::channels_last);
  }
  return in_order(gw, MemoryOrder::row_major);  // the contract's row-major filter gradient
}

}  // namespace

int64_t legacy_convolution_plans() { return legacy_count.load(); }

void register_convolution_kernels() {
  install_kernel<kernel_ops::Conv2d>(DeviceType::cuda, "cuda", conv2d);
  install_kernel<kernel_ops::Conv2dBackwardData>(DeviceType::cuda, "cuda", conv2d_backward_data);
  install_kernel<kernel_ops::Conv2dBackwardFilter>(DeviceType::cuda, "cuda", conv2d_backward_filter);
}

}  // namespace kusari::kernels::cuda
