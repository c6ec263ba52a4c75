// The host emulation's cuDNN (built with -Dcuda-emulation=true): its heuristics rank engines by dtype with
// their numerical notes, the engines compute as their notes say (TF32 inputs, sums rounded to a half
// type), a plan for 16-byte aligned operands is refused for a tensor declared less aligned, a graph whose
// extents cuDNN's formula does not give is refused, heuristics need a device and an attribute is answered
// only on its descriptor, an execution checks its data against the declared alignment, the device's
// allocations, the plan's workspace and the result's memory (no computing in place), the legacy calls'
// two algorithms equal the CPU's convolution, and the fused batch normalization declines what cuDNN's
// kernels do not take, refuses misuse and gives NaN gradients from a reserve space that is not its
// forward's.
// Part of test_cuda_emulation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/convolution_engines.h>
#include <kusari/kernels/cuda/detail/convolution_legacy.h>
#include <kusari/kernels/cuda/detail/dnn.h>
#include <kusari/kernels/cuda/detail/emulated_cudnn.h>
#include <kusari/kernels/layer_routines.h>

#include "cuda_testing.h"

using namespace kusari;
using namespace kusari::kernels::cuda;
using namespace kusari::testing;
namespace emulation = kusari::kernels::cuda::emulation;

namespace {

// x (2, 4, 6, 6), w (3, 4, 3, 3) and y (2, 3, 6, 6) of a padded 3x3 convolution, on the device.
struct Operands {
  Array x, w, y;
  Conv2dGeometry geometry{1, 1, 1, 1, 1, 1, 1};
  explicit Operands(Dtype dtype)
      : x(Array::normal({2, 4, 6, 6}, 0, 1, 11, dtype).to(gpu)),
        w(Array::normal({3, 4, 3, 3}, 0, 0.3, 12, dtype).to(gpu)),
        y(Array::empty({2, 3, 6, 6}, dtype, gpu)) {}
  ConvolutionOperands forward() const { return {x, w, y, geometry}; }
};

// The emulated cuDNN's device properties (it takes any JSON object).
const BackendDescriptor& device() {
  static const BackendDescriptor d = device_properties(std::string("{}"));
  return d;
}

// The engine numbers of plans, read from their serializations ({"engine":N}).
std::vector<std::string> engines_of(const std::vector<EnginePlan>& plans) {
  std::vector<std::string> out;
  for (const EnginePlan& p : plans) out.push_back(plan_json(*p.plan));
  return out;
}

// What the last refusal of the emulated cuDNN said.
std::string last_refusal() {
  char message[512] = "";
  cudnnGetLastErrorString(message, sizeof message);
  return message;
}

// A 4-D descriptor of x's layout (channels-last where its strides are).
struct Descriptor {
  cudnnTensorDescriptor_t d = nullptr;
  Descriptor(cudnnDataType_t type, std::vector<int> e, std::vector<int> s) {
    cudnnCreateTensorDescriptor(&d);
    REQUIRE(cudnnSetTensor4dDescriptorEx(d, type, e[0], e[1], e[2], e[3], s[0], s[1], s[2], s[3]) ==
            CUDNN_STATUS_SUCCESS);
  }
  ~Descriptor() { cudnnDestroyTensorDescriptor(d); }
};

}  // namespace

TEST_CASE("the emulated heuristics rank engines by dtype with their notes, and a plan keeps what the notes allow") {
  for (const Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::float64}) {
    INFO(dtype_name(dtype));
    const Operands o(dtype);
    const BackendDescriptor graph = convolution_graph(ConvolutionPass::forward, o.forward());
    const size_t ranked = ranked_configs(graph, CUDNN_HEUR_MODE_A, device()).size();
    CHECK(ranked == (dtype == Dtype::float16 ? 4 : dtype == Dtype::float32 ? 3 : 2));
    CHECK(ranked_configs(graph, CUDNN_HEUR_MODE_FALLBACK, device()).size() == 1);
    std::string refusals;
    const std::vector<EnginePlan> timed = engine_plans(graph, dtype, device(), int64_t{1} << 30, EngineSearch::timed,
                                                       refusals);
    // The precise engines, each once (the fallback's general engine is mode A's last one): float32 without
    // the tensor cores' TF32, float16 without the reduced-precision sums.
    const std::vector<std::string> expected =
        dtype == Dtype::float16 ? std::vector<std::string>{"{\"engine\":0}", "{\"engine\":2}", "{\"engine\":3}"}
                                : std::vector<std::string>{"{\"engine\":2}", "{\"engine\":3}"};
    CHECK(engines_of(timed) == expected);
  }
}

TEST_CASE("the emulated aligned engine builds no plan for a tensor declared less than 16-byte aligned") {
  const Array whole = Array::normal({2 * 4 * 6 * 6 + 1}, 0, 1, 13, Dtype::float32).to(gpu);
  const Array x = whole.get_item({Slice{1, 2 * 4 * 6 * 6 + 1}}).reshape({2, 4, 6, 6});  // 4 bytes in
  const Operands o(Dtype::float32);
  const ConvolutionOperands misaligned{x, o.w, o.y, o.geometry};
  std::string refusals;
  const auto aligned_plans = engine_plans(convolution_graph(ConvolutionPass::forward, o.forward()), Dtype::float32,
                                          device(), int64_t{1} << 30, EngineSearch::first, refusals);
  REQUIRE(aligned_plans.size() == 1);
  CHECK(engines_of(aligned_plans).front() == "{\"engine\":2}");
  CHECK(aligned_plans.front().workspace == 2 * 3 * 6 * 6 * 4);
  const auto plans = engine_plans(convolution_graph(ConvolutionPass::forward, misaligned), Dtype::float32, device(),
                                  int64_t{1} << 30, EngineSearch::first, refusals);
  REQUIRE(plans.size() == 1);
  CHECK(engines_of(plans).front() == "{\"engine\":3}");
  CHECK(plans.front().workspace == 0);
  CHECK(refusals.find("CUDNN_STATUS_NOT_SUPPORTED") != std::string::npos);
}

TEST_CASE("an emulated execution checks alignment, the device's allocations and the workspace") {
  const Operands o(Dtype::float32);
  std::string refusals;
  const auto plans = engine_plans(convolution_graph(ConvolutionPass::forward, o.forward()), Dtype::float32, device(),
                                  int64_t{1} << 30, EngineSearch::first, refusals);
  REQUIRE(plans.size() == 1);
  const DnnLock dnn(0);
  const Array workspace = Array::empty({plans.front().workspace}, Dtype::uint8, gpu);
  run_engine(dnn.handle(), plans.front(), o.forward(), workspace.raw_data());
  check_close(o.y, ops::convolution_2d(o.x.to(Device::cpu()), o.w.to(Device::cpu()), Array(), o.geometry, o.y.shape()),
              1e-5, "forward", Relative::to_largest);
  // A plan of 16-byte aligned tensors given data 4 bytes in.
  const Array whole = Array::zeros({2 * 4 * 6 * 6 + 1}, Dtype::float32, gpu);
  const Array shifted = whole.get_item({Slice{1, 2 * 4 * 6 * 6 + 1}}).reshape({2, 4, 6, 6});
  CHECK_THROWS_WITH_AS(run_engine(dnn.handle(), plans.front(), {shifted, o.w, o.y, o.geometry}, workspace.raw_data()),
                       doctest::Contains("CUDNN_STATUS_BAD_PARAM"), DeviceError);
  CHECK(last_refusal().find("is not aligned to the 16 bytes it declares") != std::string::npos);
  // Host memory where the device's is expected.
  const Array on_host = Array::zeros({2, 4, 6, 6}, Dtype::float32, Device::cpu());
  CHECK_THROWS_AS(run_engine(dnn.handle(), plans.front(), {on_host, o.w, o.y, o.geometry}, workspace.raw_data()),
                  DeviceError);
  CHECK(last_refusal().find("beyond its allocation on the emulated device") != std::string::npos);
  // Less workspace than the plan takes.
  const Array small = Array::empty({plans.front().workspace / 2}, Dtype::uint8, gpu);
  CHECK_THROWS_AS(run_engine(dnn.handle(), plans.front(), o.forward(), small.raw_data()), DeviceError);
  CHECK(last_refusal().find("a workspace of fewer than the plan's") != std::string::npos);
  // The result's memory as the workspace: cuDNN does not compute in place.
  CHECK_THROWS_AS(run_engine(dnn.handle(), plans.front(), o.forward(), o.y.raw_data()), DeviceError);
  CHECK(last_refusal().find("the result y overlaps the workspace") != std::string::npos);
  // The legacy calls refuse it too.
  CHECK_THROWS_AS(run_legacy(dnn.handle(), ConvolutionPass::forward, o.forward(), {1, plans.front().workspace},
                             o.y.raw_data()),
                  DeviceError);
  CHECK(last_refusal().find("the result y overlaps the workspace") != std::string::npos);
}

TEST_CASE("the emulated backend answers an attribute only on its descriptor, and heuristics need a device") {
  const Operands o(Dtype::float32);
  const BackendDescriptor graph = convolution_graph(ConvolutionPass::forward, o.forward());
  const BackendDescriptor config = ranked_configs(graph, CUDNN_HEUR_MODE_A, device()).front();
  // An engine's notes read from its configuration rather than its engine.
  int64_t count = 0;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  CHECK(cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                 CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes) == CUDNN_STATUS_BAD_PARAM);
  CHECK(last_refusal().find("an attribute of another descriptor, or read as another type") != std::string::npos);
  // Heuristics without the device they rank for.
  BackendDescriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, "heuristics");
  heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristics");
  CHECK(heuristics.try_finalize() == CUDNN_STATUS_BAD_PARAM);
  CHECK(last_refusal().find("heuristics without a graph, mode or device properties") != std::string::npos);
}

TEST_CASE("an emulated graph whose output extents cuDNN's formula does not give is refused") {
  const Operands o(Dtype::float32);
  const Array y = Array::empty({2, 3, 7, 7}, Dtype::float32, gpu);  // cover_all's extents; cuDNN's are 6
  CHECK_THROWS_WITH_AS(convolution_graph(ConvolutionPass::forward, {o.x, o.w, y, o.geometry}),
                       doctest::Contains("CUDNN_STATUS_BAD_PARAM"), DeviceError);
  CHECK(last_refusal().find("expected an output extent of 6, got 7") != std::string::npos);
}

TEST_CASE("the emulated engines compute as their notes say: TF32 inputs, sums rounded to the half type") {
  const DnnLock dnn(0);
  // The first plan mode A ranks, run on x and w of 1x1 pixels: y's one value.
  const auto first_engine = [&](const Array& x, const Array& w) {
    const Array y = Array::zeros({1, 1, 1, 1}, x.dtype(), gpu);
    const Conv2dGeometry g{1, 1, 0, 0, 1, 1, 1};
    const ConvolutionOperands o{x, w, y, g};
    const BackendDescriptor graph = convolution_graph(ConvolutionPass::forward, o);
    const BackendDescriptor config = ranked_configs(graph, CUDNN_HEUR_MODE_A, device()).front();
    cudnnStatus_t why = CUDNN_STATUS_SUCCESS;
    const auto plan = try_plan(config, device(), why);
    REQUIRE(plan);
    const Array workspace = Array::empty({plan_workspace(*plan) + 1}, Dtype::uint8, gpu);
    run_engine(dnn.handle(), {plan, graph, config, plan_workspace(*plan)}, o, workspace.raw_data());
    return y.to(Device::cpu()).item<double>();
  };
  // float32: the tensor cores' engine reads 1 + 2^-20 as TF32's 1.
  const Array one_and_a_bit = Array::full({1, 1, 1, 1}, 1.0 + 0x1p-20, Dtype::float32).to(gpu);
  CHECK(first_engine(one_and_a_bit, Array::ones({1, 1, 1, 1}, Dtype::float32).to(gpu)) == 1.0);
  // float16: the reduced-precision engine's sum of 4096 ones stops at 2048; float32's engine reaches 4096.
  const Array ones = Array::ones({1, 4096, 1, 1}, Dtype::float16).to(gpu);
  CHECK(first_engine(ones, ones) == 2048);
  const Array wide_ones = Array::ones({1, 4096, 1, 1}, Dtype::float32).to(gpu);
  CHECK(first_engine(wide_ones, wide_ones) == 4096);
}

TEST_CASE("the emulated legacy algorithms, chosen and timed, equal the CPU's convolution in every pass") {
  for (const bool timed : {false, true}) {
    for (const size_t limit : {size_t{0}, size_t{1} << 30}) {
      INFO((timed ? "timed" : "heuristics"), ", workspace limit ", limit);
      const Operands o(Dtype::float32);
      const Array gy = Array::normal({2, 3, 6, 6}, 0, 1, 14, Dtype::float32).to(gpu);
      const Array gx = Array::empty({2, 4, 6, 6}, Dtype::float32, gpu);
      const Array gw = Array::empty({3, 4, 3, 3}, Dtype::float32, gpu);
      const Array x = o.x.to(Device::cpu()), w = o.w.to(Device::cpu()), g = gy.to(Device::cpu());
      const DnnLock dnn(0);
      const auto run = [&](ConvolutionPass pass, const ConvolutionOperands& operands) {
        const LegacyPlan plan = legacy_plan(dnn.handle(), pass, operands, timed, limit);
        CHECK((plan.workspace == 0) == (limit == 0 || plan.algorithm == 0));
        const Array workspace = Array::empty({static_cast<int64_t>(plan.workspace) + 1}, Dtype::uint8, gpu);
        run_legacy(dnn.handle(), pass, operands, plan, workspace.raw_data());
      };
      run(ConvolutionPass::forward, o.forward());
      run(ConvolutionPass::backward_data, {gy, o.w, gx, o.geometry});
      run(ConvolutionPass::backward_filter, {o.x, gw, gy, o.geometry});
      check_close(o.y, ops::convolution_2d(x, w, Array(), o.geometry, o.y.shape()), 1e-5, "forward",
                  Relative::to_largest);
      check_close(gx, ops::convolution_2d_backward_data(g, w, Array(), o.geometry, x.shape()), 1e-5, "data gradient",
                  Relative::to_largest);
      check_close(gw, ops::convolution_2d_backward_filter(x, g, o.geometry, w.shape()), 1e-5, "filter gradient",
                  Relative::to_largest);
    }
  }
}

TEST_CASE("the emulated fused batch normalization declines what cuDNN's kernels do not take") {
  const DnnLock dnn(0);
  cudnnActivationDescriptor_t relu = nullptr;
  cudnnCreateActivationDescriptor(&relu);
  REQUIRE(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0) == CUDNN_STATUS_SUCCESS);
  const Descriptor nhwc(CUDNN_DATA_HALF, {2, 8, 3, 3}, {72, 1, 24, 8}), nchw(CUDNN_DATA_HALF, {2, 8, 3, 3}, {72, 9, 3, 1});
  const Descriptor six_channels(CUDNN_DATA_HALF, {2, 6, 3, 3}, {54, 1, 18, 6});
  size_t bytes = 0;
  const auto size = [&](cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const Descriptor& x,
                        cudnnActivationDescriptor_t activation) {
    return cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(dnn.handle(), mode, ops, x.d, nullptr, x.d,
                                                                    nullptr, activation, &bytes);
  };
  CHECK(size(CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, nhwc, relu) == CUDNN_STATUS_SUCCESS);
  CHECK(size(CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN, nchw, nullptr) == CUDNN_STATUS_SUCCESS);
  CHECK(size(CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, nchw, nullptr) == CUDNN_STATUS_NOT_SUPPORTED);
  CHECK(size(CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, nhwc, relu) == CUDNN_STATUS_NOT_SUPPORTED);
  CHECK(size(CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, six_channels, relu) ==
        CUDNN_STATUS_NOT_SUPPORTED);
  CHECK(last_refusal().find("multiples of 4, got 6") != std::string::npos);
  CHECK(size(CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, nhwc, nullptr) ==
        CUDNN_STATUS_NOT_SUPPORTED);
  CHECK(size(CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION, nhwc, relu) ==
        CUDNN_STATUS_NOT_SUPPORTED);  // no z
  cudnnDestroyActivationDescriptor(relu);
}

TEST_CASE("the emulated fused batch normalization refuses misuse: z without the residual, a short reserve, "
          "misaligned data, half the saved statistics") {
  const DnnLock dnn(0);
  cudnnActivationDescriptor_t relu = nullptr;
  cudnnCreateActivationDescriptor(&relu);
  REQUIRE(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0) == CUDNN_STATUS_SUCCESS);
  const Descriptor nhwc(CUDNN_DATA_HALF, {2, 8, 3, 3}, {72, 1, 24, 8});
  const Descriptor channels(CUDNN_DATA_FLOAT, {1, 8, 1, 1}, {8, 1, 1, 1});
  const Array x = Array::normal({2 * 8 * 3 * 3 + 8}, 0, 1, 15, Dtype::float16).to(gpu);
  const Array y = Array::empty({2 * 8 * 3 * 3}, Dtype::float16, gpu);
  const Array per_channel = Array::ones({8}, Dtype::float32, gpu);
  const Array mean = Array::empty({8}, Dtype::float32, gpu), inv_std = Array::empty({8}, Dtype::float32, gpu);
  const Array space = Array::empty({4096}, Dtype::uint8, gpu), reserve = Array::empty({4096}, Dtype::uint8, gpu);
  const float one = 1, zero = 0;
  size_t reserve_bytes = 0;
  REQUIRE(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(dnn.handle(), CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
                                                               CUDNN_BATCHNORM_OPS_BN_ACTIVATION, relu, nhwc.d,
                                                               &reserve_bytes) == CUDNN_STATUS_SUCCESS);
  const auto forward = [&](const void* data, const Descriptor* z, size_t reserve_size) {
    return cudnnBatchNormalizationForwardTrainingEx(
        dnn.handle(), CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one, &zero, nhwc.d, data,
        z ? z->d : nullptr, z ? data : nullptr, nhwc.d, y.raw_data(), channels.d, per_channel.raw_data(),
        per_channel.raw_data(), 0, nullptr, nullptr, 1e-5, mean.raw_data(), inv_std.raw_data(), relu, space.raw_data(),
        4096, reserve.raw_data(), reserve_size);
  };
  CHECK(forward(x.raw_data(), &nhwc, reserve_bytes) == CUDNN_STATUS_BAD_PARAM);
  CHECK(last_refusal().find("z given to operations without the residual") != std::string::npos);
  CHECK(forward(x.raw_data(), nullptr, reserve_bytes - 1) == CUDNN_STATUS_BAD_PARAM);
  const void* off_boundary = static_cast<const char*>(x.raw_data()) + 2;
  CHECK(forward(off_boundary, nullptr, reserve_bytes) == CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER);
  CHECK(forward(x.raw_data(), nullptr, reserve_bytes) == CUDNN_STATUS_SUCCESS);
  const Array dx = Array::empty({2 * 8 * 3 * 3}, Dtype::float16, gpu);
  const Array dgamma = Array::empty({8}, Dtype::float32, gpu), dbeta = Array::empty({8}, Dtype::float32, gpu);
  CHECK(cudnnBatchNormalizationBackwardEx(dnn.handle(), CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
                                          CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one, &zero, &one, &zero, nhwc.d,
                                          x.raw_data(), nhwc.d, y.raw_data(), nhwc.d, y.raw_data(), nullptr, nullptr,
                                          nhwc.d, dx.raw_data(), channels.d, per_channel.raw_data(),
                                          per_channel.raw_data(), dgamma.raw_data(), dbeta.raw_data(), 1e-5,
                                          mean.raw_data(), nullptr, relu, space.raw_data(), 4096, reserve.raw_data(),
                                          reserve_bytes) == CUDNN_STATUS_BAD_PARAM);
  CHECK(last_refusal().find("one of the saved mean and inverse deviation without the other") != std::string::npos);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cudnnDestroyActivationDescriptor(relu);
}

TEST_CASE("the emulated batch normalization's backward gives NaN where its reserve is not its forward's") {
  emulation::DnnBatchNorm bn;
  bn.x = {CUDNN_DATA_FLOAT, {4, 2, 1, 1}, {2, 1, 1, 1}};
  bn.epsilon = 1e-5;
  const std::vector<float> x{1, 10, 2, 20, 3, 30, 4, 40}, gamma{1, 2}, beta{0, 1}, dy{1, -1, 2, 0, -3, 1, 0, 2};
  std::vector<float> y(8), mean(2), inv_std(2), reserve(emulation::batch_norm_reserve_bytes(bn.x) / sizeof(float));
  emulation::batch_norm_forward(bn, 1, 0, x.data(), nullptr, y.data(), gamma.data(), beta.data(), 0, nullptr, nullptr,
                                mean.data(), inv_std.data(), reserve.data());
  CHECK(mean == std::vector<float>{2.5f, 25.0f});
  CHECK(inv_std[0] == doctest::Approx(1 / std::sqrt(1.25 + 1e-5)));
  std::vector<float> dx(8), dgamma(2), dbeta(2);
  for (const bool saved : {true, false}) {
    INFO((saved ? "the saved statistics" : "statistics recomputed"));
    emulation::batch_norm_backward(bn, 1, 0, 1, 0, x.data(), nullptr, dy.data(), nullptr, dx.data(), gamma.data(),
                                   dgamma.data(), dbeta.data(), saved ? mean.data() : nullptr,
                                   saved ? inv_std.data() : nullptr, reserve.data());
    CHECK(dbeta == std::vector<float>{0.0f, 2.0f});
    CHECK(std::none_of(dx.begin(), dx.end(), [](float v) { return std::isnan(v); }));
  }
  reserve[0] += 1;  // another forward's mean in channel 0
  emulation::batch_norm_backward(bn, 1, 0, 1, 0, x.data(), nullptr, dy.data(), nullptr, dx.data(), gamma.data(),
                                 dgamma.data(), dbeta.data(), mean.data(), inv_std.data(), reserve.data());
  CHECK(std::isnan(dx[0]));
  CHECK_FALSE(std::isnan(dx[1]));
}
