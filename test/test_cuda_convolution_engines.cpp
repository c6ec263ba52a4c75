// A convolution pass as a cuDNN operation graph and its engine plans (detail/convolution_engines.h), on
// the host (a CUDA build's host suite; no GPU needed: cuDNN ranks and builds plans for a device it is
// given a description of, here an sm_90 GPU with an H100's properties): every pass of ResNet-50's
// convolution shapes, grouped and misaligned operands, in each dtype and layout the device runs, gets
// a plan within its workspace limit from engines that keep the dtype's precision (float32's TF32
// engines, which cuDNN ranks, left out); a graph whose extents do not fit its geometry is refused.

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/convolution_engines.h>

using namespace kusari;
using namespace kusari::kernels::cuda;

namespace {

// An sm_90 GPU as cuDNN's device properties serialize it (an H100 SXM's figures).
const BackendDescriptor& hopper() {
  static const BackendDescriptor device = device_properties(
      R"({"deviceName": "NVIDIA H100 80GB HBM3", "deviceVer": 900, "driverVer": 13000, "cudaDeviceId": 0,)"
      R"( "pciDeviceId": 0, "multiProcessorCount": 132, "maxGridSize": [2147483647, 65535, 65535],)"
      R"( "maxBlockSize": [1024, 1024, 64], "maxThreadsPerBlock": 1024, "maxThreadsPerSM": 2048, "maxCtasPerSM": 32,)"
      R"( "warpSize": 32, "regsPerBlock": 65536, "maxRegistersPerSM": 65536, "maxSharedMemoryPerBlock": 49152,)"
      R"( "maxSharedMemoryPerBlockOptin": 232448, "reservedSharedMemoryPerBlock": 1024, "l2CacheSize": 52428800,)"
      R"( "totalGlobalMem": 85520809984, "smClockRateKHz": 1980000, "memClockRateKHz": 2619000, "isTccDriver": 0,)"
      R"( "supportCoopLaunch": 1})");
  return device;
}

// The workspace limit of these tests: 1 GiB (the device allows half its free memory).
constexpr int64_t kLimit = int64_t{1} << 30;

// A convolution's operand extents and geometry.
struct Shapes {
  Shape x, w, y;
  Conv2dGeometry g;
};

// ResNet-50's kinds of convolution at batch 2 (the stem, a 3x3 and a 1x1 of a bottleneck, a strided
// 3x3, the strided 1x1 projection) and a grouped one.
std::vector<Shapes> model_shapes() {
  return {{{2, 3, 224, 224}, {64, 3, 7, 7}, {2, 64, 112, 112}, {2, 2, 3, 3, 1, 1, 1}},
          {{2, 64, 56, 56}, {64, 64, 3, 3}, {2, 64, 56, 56}, {1, 1, 1, 1, 1, 1, 1}},
          {{2, 256, 56, 56}, {64, 256, 1, 1}, {2, 64, 56, 56}, {1, 1, 0, 0, 1, 1, 1}},
          {{2, 128, 56, 56}, {128, 128, 3, 3}, {2, 128, 28, 28}, {2, 2, 1, 1, 1, 1, 1}},
          {{2, 256, 56, 56}, {512, 256, 1, 1}, {2, 512, 28, 28}, {2, 2, 0, 0, 1, 1, 1}},
          {{2, 64, 28, 28}, {64, 32, 3, 3}, {2, 64, 28, 28}, {1, 1, 1, 1, 1, 1, 2}}};
}

// The three operands of `pass` in `order` (the filter in the image's order, as convolution.cpp packs it).
struct Operands {
  Array image, filter, result;
};

Operands operands_of(ConvolutionPass pass, const Shapes& s, Dtype dtype, MemoryOrder order) {
  const Array x = empty_in_order(s.x, order, dtype), w = empty_in_order(s.w, order, dtype),
              y = empty_in_order(s.y, order, dtype);
  // The data gradient reads gy (the image slot) and writes gx (the result slot).
  return pass == ConvolutionPass::backward_data ? Operands{y, w, x} : Operands{x, w, y};
}

// Whether any of these notes is the tensor cores'.
bool on_tensor_cores(const std::vector<cudnnBackendNumericalNote_t>& notes) {
  return std::find(notes.begin(), notes.end(), CUDNN_NUMERICAL_NOTE_TENSOR_CORE) != notes.end();
}

const std::vector<ConvolutionPass> kPasses = {ConvolutionPass::forward, ConvolutionPass::backward_data,
                                              ConvolutionPass::backward_filter};

}  // namespace

TEST_CASE("an engine keeps a dtype's precision unless it converts inputs down, reduces narrower, or is TF32") {
  CHECK(keeps_precision(Dtype::float32, {}));
  CHECK(keeps_precision(Dtype::float32, {CUDNN_NUMERICAL_NOTE_FFT, CUDNN_NUMERICAL_NOTE_WINOGRAD}));
  CHECK(keeps_precision(Dtype::float32, {CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC}));
  CHECK_FALSE(keeps_precision(Dtype::float32, {CUDNN_NUMERICAL_NOTE_TENSOR_CORE}));
  CHECK(keeps_precision(Dtype::float16, {CUDNN_NUMERICAL_NOTE_TENSOR_CORE}));
  CHECK(keeps_precision(Dtype::bfloat16, {CUDNN_NUMERICAL_NOTE_TENSOR_CORE}));
  CHECK(keeps_precision(Dtype::float64, {CUDNN_NUMERICAL_NOTE_TENSOR_CORE}));
  for (const Dtype dtype : {Dtype::float64, Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
    CAPTURE(dtype);
    CHECK_FALSE(keeps_precision(dtype, {CUDNN_NUMERICAL_NOTE_TENSOR_CORE, CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS}));
    CHECK_FALSE(keeps_precision(dtype, {CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION}));
  }
}

TEST_CASE("every pass of the models' convolutions gets a plan from precise engines, in each dtype and layout") {
  const std::vector<std::pair<Dtype, MemoryOrder>> kinds = {{Dtype::float32, MemoryOrder::row_major},
                                                            {Dtype::float32, MemoryOrder::channels_last},
                                                            {Dtype::float16, MemoryOrder::channels_last},
                                                            {Dtype::bfloat16, MemoryOrder::channels_last},
                                                            {Dtype::float16, MemoryOrder::row_major},
                                                            {Dtype::float64, MemoryOrder::row_major}};
  bool tf32_ranked = false;  // whether float32's ranking offered TF32 engines the filter left out
  for (const Shapes& s : model_shapes()) {
    for (const auto& kind : kinds) {
      const Dtype dtype = kind.first;
      const MemoryOrder order = kind.second;
      for (const ConvolutionPass pass : kPasses) {
        CAPTURE(s.x);
        CAPTURE(s.w);
        CAPTURE(dtype);
        CAPTURE(static_cast<int>(order));
        CAPTURE(static_cast<int>(pass));
        const Operands a = operands_of(pass, s, dtype, order);
        const BackendDescriptor graph =
            convolution_graph(pass, {a.image, a.filter, a.result, s.g, order == MemoryOrder::channels_last});
        const std::vector<BackendDescriptor> precise = precise_configs(graph, CUDNN_HEUR_MODE_A, dtype, hopper());
        CHECK(!precise.empty());
        for (const BackendDescriptor& config : precise) {
          if (dtype == Dtype::float32) CHECK_FALSE(on_tensor_cores(numerical_notes(config)));
        }
        if (dtype == Dtype::float32) {
          for (const BackendDescriptor& config : ranked_configs(graph, CUDNN_HEUR_MODE_A, hopper())) {
            tf32_ranked = tf32_ranked || on_tensor_cores(numerical_notes(config));
          }
        }
        std::string refusals;
        const std::vector<EnginePlan> first =
            engine_plans(graph, dtype, hopper(), kLimit, EngineSearch::first, refusals);
        REQUIRE(first.size() == 1);
        CHECK(first.front().plan);
        CHECK(first.front().workspace >= 0);
        CHECK(first.front().workspace <= kLimit);
      }
    }
  }
  CHECK(tf32_ranked);
}

TEST_CASE("a timed search's candidates: distinct plans within the limit, at most ten, the heuristics' first first") {
  const Shapes s = model_shapes()[1];
  for (const Dtype dtype : {Dtype::float32, Dtype::float16}) {
    CAPTURE(dtype);
    const MemoryOrder order = dtype == Dtype::float16 ? MemoryOrder::channels_last : MemoryOrder::row_major;
    const Operands a = operands_of(ConvolutionPass::backward_filter, s, dtype, order);
    const BackendDescriptor graph = convolution_graph(
        ConvolutionPass::backward_filter, {a.image, a.filter, a.result, s.g, order == MemoryOrder::channels_last});
    std::string refusals;
    const std::vector<EnginePlan> all = engine_plans(graph, dtype, hopper(), kLimit, EngineSearch::timed, refusals);
    const std::vector<EnginePlan> first = engine_plans(graph, dtype, hopper(), kLimit, EngineSearch::first, refusals);
    CHECK(all.size() > 1);
    CHECK(all.size() <= kMostTimed);
    REQUIRE(first.size() == 1);
    CHECK(!plan_json(*all.front().plan).empty());
    CHECK(plan_json(*all.front().plan) == plan_json(*first.front().plan));
    std::set<std::string> distinct;
    for (const EnginePlan& plan : all) distinct.insert(plan_json(*plan.plan));
    CHECK(distinct.size() == all.size());
    // No workspace at all: only plans that take none, the others named among the refusals.
    std::string without;
    const std::vector<EnginePlan> none = engine_plans(graph, dtype, hopper(), 0, EngineSearch::timed, without);
    CHECK(!none.empty());
    for (const EnginePlan& plan : none) CHECK(plan.workspace == 0);
    const bool some_wanted_workspace =
        std::any_of(all.begin(), all.end(), [](const EnginePlan& p) { return p.workspace > 0; });
    CHECK(some_wanted_workspace);
    CHECK(without.find("bytes of workspace") != std::string::npos);
  }
}

TEST_CASE("a device description cuDNN cannot read is refused with its reason") {
  CHECK_THROWS_WITH_AS(device_properties(std::string(R"({"deviceVer": 900})")),
                       doctest::Contains("maxGridSize"), DeviceError);
  CHECK_THROWS_AS(device_properties(std::string("not json")), DeviceError);
}

TEST_CASE("a graph tensor says its data's alignment: a view at an odd element is ranked at 2 bytes") {
  CHECK(byte_alignment(reinterpret_cast<const void*>(uintptr_t{4096})) == 16);
  CHECK(byte_alignment(reinterpret_cast<const void*>(uintptr_t{4104})) == 8);
  CHECK(byte_alignment(reinterpret_cast<const void*>(uintptr_t{4098})) == 2);
  CHECK(byte_alignment(reinterpret_cast<const void*>(uintptr_t{4097})) == 1);
  // float16 operands one element into a larger array: cuDNN still ranks engines for them.
  const Array whole = Array::empty({2 * 64 * 28 * 28 + 1}, Dtype::float16);
  const Array x = whole.get_item({Slice{1, 2 * 64 * 28 * 28 + 1}}).reshape({2, 64, 28, 28});
  CHECK(byte_alignment(x.raw_data()) == 2);
  const Array w = Array::empty({64, 64, 3, 3}, Dtype::float16), y = Array::empty({2, 64, 28, 28}, Dtype::float16);
  const Conv2dGeometry g{1, 1, 1, 1, 1, 1, 1};
  const BackendDescriptor graph = convolution_graph(ConvolutionPass::forward, {x, w, y, g, false});
  std::string refusals;
  CHECK(engine_plans(graph, Dtype::float16, hopper(), kLimit, EngineSearch::first, refusals).size() == 1);
}

TEST_CASE("a graph whose output extents do not fit its geometry is refused, naming the operation") {
  const Array x = Array::empty({2, 8, 10, 10}), w = Array::empty({4, 8, 3, 3});
  const Conv2dGeometry g{1, 1, 1, 1, 1, 1, 1};
  const Array too_large = Array::empty({2, 4, 11, 10});
  CHECK_THROWS_WITH_AS(convolution_graph(ConvolutionPass::forward, {x, w, too_large, g, false}),
                       doctest::Contains("a cuDNN convolution operation"), DeviceError);
  const Array wrong_channels = Array::empty({2, 5, 10, 10});
  CHECK_THROWS_AS(convolution_graph(ConvolutionPass::forward, {x, w, wrong_channels, g, false}), DeviceError);
}
