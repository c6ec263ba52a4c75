#pragma once
// Internal to the CUDA backend: a 2-D convolution pass as a cuDNN operation graph, the engines cuDNN
// ranks for it that compute as kusari promises, and the plans built from them (convolution.cpp takes
// the heuristics' first or times them all). Only running a plan needs the device, so the host suite
// builds every pass of the shapes the models use for a described sm_90 device.

#include <optional>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/kernels/cuda/detail/dnn_graph.h>
#include <kusari/kernels/ops/convolution.h>

namespace kusari::kernels::cuda {

// The three computations of a convolution.
enum class ConvolutionPass { forward, backward_data, backward_filter };

// One pass's 4-D operands of one floating dtype, in the slots of cuDNN's calls: `image` is read (x; gy
// for the data gradient), `filter` is the filter (written by the filter gradient), `result` is the
// image-shaped other (y; gx; gy, read, for the filter gradient); and the geometry. The filter is
// packed, channels-last where `filter_channels_last`.
struct ConvolutionOperands {
  const Array& image;
  const Array& filter;
  const Array& result;
  const Conv2dGeometry& geometry;
  bool filter_channels_last = false;
};

// Whether an engine with these numerical notes computes `dtype` as kusari's convolutions promise:
// nothing converted to a narrower type on the way (float32 never on TF32 tensor cores) and sums
// accumulated at least in float32.
bool keeps_precision(Dtype dtype, const std::vector<cudnnBackendNumericalNote_t>& notes);

// The graph of one pass: the operands' extents, strides and data alignment as they are, the groups
// given by the filter's channel count.
BackendDescriptor convolution_graph(ConvolutionPass pass, const ConvolutionOperands& o);

// The configurations cuDNN's heuristics in `mode` rank for `graph` on `device`, best first, that keep
// `dtype`'s precision (keeps_precision).
std::vector<BackendDescriptor> precise_configs(const BackendDescriptor& graph, cudnnBackendHeurMode_t mode,
                                               Dtype dtype, const BackendDescriptor& device);

// Appends `why` to a list of cuDNN's refusals, "; " between them.
void add_refusal(std::string& refusals, const std::string& why);

// An execution plan of one pass on one device, the graph and engine configuration it was built from (kept
// alive with it, whether or not cuDNN's plan holds copies of its own), and the workspace it takes.
struct EnginePlan {
  std::shared_ptr<BackendDescriptor> plan;
  BackendDescriptor graph, config;
  int64_t workspace = 0;
};

// Which of the plans engine_plans builds: the first, or the candidates of a timed search.
enum class EngineSearch { first, timed };

// The most plans a timed search times (as PyTorch's torch.backends.cudnn.benchmark_limit).
constexpr size_t kMostTimed = 10;

// The plans of `graph` of `dtype` cuDNN builds for `device` with at most `limit` bytes of workspace from
// the precise configurations its heuristics rank (mode A's list, then its fallback list), in that order:
// the first only, or for a timed search the first kMostTimed distinct ones (a configuration both lists
// rank built once). `refusals` gains what cuDNN answered for each configuration it did not build or
// whose plan wanted more workspace.
std::vector<EnginePlan> engine_plans(const BackendDescriptor& graph, Dtype dtype, const BackendDescriptor& device,
                                     int64_t limit, EngineSearch search, std::string& refusals);

// Runs a plan of convolution_graph on the operands' data with `workspace`.
void run_engine(cudnnHandle_t handle, const EnginePlan& plan, const ConvolutionOperands& o, void* workspace);

}  // namespace kusari::kernels::cuda
