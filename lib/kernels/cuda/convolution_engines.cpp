// A convolution pass as a cuDNN graph, its engines and plans (detail/convolution_engines.h).

#include <kusari/kernels/cuda/detail/convolution_engines.h>

#include <algorithm>
#include <set>
#include <string>

#include <kusari/kernels/cuda/detail/dnn.h>

namespace kusari::kernels::cuda {
namespace {

// The names the three operand slots take in a graph and its variant packs.
constexpr int64_t kImageUid = 1, kFilterUid = 2, kResultUid = 3;

// An operand as a graph tensor named `uid`.
BackendDescriptor operand_tensor(const Array& a, int64_t uid) {
  const std::vector<int64_t> extents(a.shape().begin(), a.shape().end());
  const std::vector<int64_t> strides(a.strides().begin(), a.strides().end());
  return graph_tensor(uid, dnn_type(a.dtype(), "conv2d"), extents, strides, byte_alignment(a.raw_data()));
}

// The geometry of a cross-correlation over two spatial axes, accumulated in `compute`.
BackendDescriptor convolution_geometry(const Conv2dGeometry& g, cudnnDataType_t compute) {
  constexpr const char* what = "a cuDNN convolution";
  BackendDescriptor c(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  c.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what);
  c.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, what);
  c.set_int64s(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, {2}, what);
  c.set_int64s(CUDNN_ATTR_CONVOLUTION_DILATIONS, {g.dilation_h, g.dilation_w}, what);
  c.set_int64s(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, {g.stride_h, g.stride_w}, what);
  c.set_int64s(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, {g.pad_h, g.pad_w}, what);
  c.set_int64s(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, {g.pad_h, g.pad_w}, what);
  c.finalize(what);
  return c;
}

// A pass's operation: its descriptor type and the attributes its three operands, geometry and
// scales go to.
struct PassAttributes {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t image, filter, result, geometry, alpha, beta;
};

PassAttributes attributes_of(ConvolutionPass pass) {
  switch (pass) {
    case ConvolutionPass::forward:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
    case ConvolutionPass::backward_data:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case ConvolutionPass::backward_filter:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
  }
  throw ValueError("conv2d: unknown pass");
}

}  // namespace

bool keeps_precision(Dtype dtype, const std::vector<cudnnBackendNumericalNote_t>& notes) {
  for (const cudnnBackendNumericalNote_t note : notes) {
    if (note == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS || note == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION) {
      return false;
    }
    if (note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && dtype == Dtype::float32) return false;  // TF32
  }
  return true;
}

BackendDescriptor convolution_graph(ConvolutionPass pass, const ConvolutionOperands& o) {
  constexpr const char* what = "a cuDNN convolution operation";
  const bool wide = o.image.dtype() == Dtype::float64;
  const BackendDescriptor geometry = convolution_geometry(o.geometry, wide ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT);
  const PassAttributes a = attributes_of(pass);
  BackendDescriptor op(a.type);
  op.set_descriptor(a.image, operand_tensor(o.image, kImageUid), what);
  op.set_descriptor(a.filter, operand_tensor(o.filter, kFilterUid), what);
  op.set_descriptor(a.result, operand_tensor(o.result, kResultUid), what);
  op.set_descriptor(a.geometry, geometry, what);
  // result = 1 * the pass, replacing what was there (the scales in the compute type's precision).
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const cudnnBackendAttributeType_t scale = wide ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  op.set(a.alpha, scale, 1, wide ? static_cast<const void*>(&one64) : &one32, what);
  op.set(a.beta, scale, 1, wide ? static_cast<const void*>(&zero64) : &zero32, what);
  op.finalize(what);
  return operation_graph(op);
}

std::vector<BackendDescriptor> precise_configs(const BackendDescriptor& graph, cudnnBackendHeurMode_t mode,
                                               Dtype dtype, const BackendDescriptor& device) {
  std::vector<BackendDescriptor> kept;
  for (const BackendDescriptor& config : ranked_configs(graph, mode, device)) {
    try {
      if (keeps_precision(dtype, numerical_notes(config))) kept.push_back(config);
    } catch (const DeviceError&) {
      // An engine whose notes cannot be read makes no promise about precision: left out.
    }
  }
  return kept;
}

void add_refusal(std::string& refusals, const std::string& why) {
  refusals += cat(refusals.empty() ? "" : "; ", why);
}

std::vector<EnginePlan> engine_plans(const BackendDescriptor& graph, Dtype dtype, const BackendDescriptor& device,
                                     int64_t limit, EngineSearch search, std::string& refusals) {
  std::vector<EnginePlan> plans;
  std::set<std::string> built;  // the plans' serializations, so that none is timed twice
  const size_t most = search == EngineSearch::first ? 1 : kMostTimed;
  for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    std::vector<BackendDescriptor> configs;
    try {
      configs = precise_configs(graph, mode, dtype, device);
    } catch (const DeviceError& e) {  // one mode's heuristics refusing the graph leaves the other's
      add_refusal(refusals, e.what());
      continue;
    }
    for (const BackendDescriptor& config : configs) {
      cudnnStatus_t why = CUDNN_STATUS_SUCCESS;
      std::shared_ptr<BackendDescriptor> plan = try_plan(config, device, why);
      if (!plan) {
        add_refusal(refusals, cudnnGetErrorString(why));
        continue;
      }
      const int64_t workspace = plan_workspace(*plan);
      if (workspace > limit) {
        add_refusal(refusals, cat("a plan wanting ", workspace, " bytes of workspace"));
        continue;
      }
      if (search == EngineSearch::timed) {
        const std::string serialized = plan_json(*plan);  // empty: not comparable, kept
        if (!serialized.empty() && !built.insert(serialized).second) continue;
      }
      plans.push_back({plan, graph, config, workspace});
      if (plans.size() == most) return plans;
    }
  }
  return plans;
}

void run_engine(cudnnHandle_t handle, const EnginePlan& plan, const ConvolutionOperands& o, void* workspace) {
  execute_plan(handle, *plan.plan, {kImageUid, kFilterUid, kResultUid},
               {o.image.raw_data(), o.filter.raw_data(), o.result.raw_data()}, workspace);
}

}  // namespace kusari::kernels::cuda
