// The CUDA batch normalization against the CPU's: forward (statistics, output) and backward (gx, ggamma,
// gbeta) with and without the ReLU and a residual, in every floating dtype, for row-major and
// channels-last inputs and 2-D (N, C) ones, and which cases go through cuDNN's fused batch normalization
// (whose backward of a fused ReLU reads the forward's output), float32 of large magnitude and views off a 16-byte boundary included.
// Sums run in another order on the device, so values agree to the rounding of their dtype.
// Part of test_cuda_device (its main skips without a GPU).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/channel_gate.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/batch_norm_fusion.h>
#include <kusari/kernels/layer_routines.h>
#include <kusari/kernels/routines.h>

#include "cuda_testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

double tolerance(Dtype dtype) {
  return dtype == Dtype::float64 ? 1e-12 : dtype == Dtype::float32 ? 2e-5 : dtype == Dtype::float16 ? 4e-3 : 3e-2;
}

// gamma's or beta's gradient from the device as float64: cuDNN's backward gives float32, the channel
// passes float64, as the contract allows (anything else fails).
Array parameter_gradient(const Array& g) {
  REQUIRE((g.dtype() == Dtype::float32 || g.dtype() == Dtype::float64));
  return g.astype(Dtype::float64);
}

}  // namespace

TEST_CASE("batch normalization forward and backward equal the CPU's") {
  for (const Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
    for (const bool channels_last : {false, true}) {
      for (const bool relu : {false, true}) {
        for (const bool residual : {false, true}) {
          const std::string what = dtype_name(dtype) + (channels_last ? ", channels-last" : "") +
                                   (relu ? ", relu" : "") + (residual ? ", residual" : "");
          INFO(what);
          const Shape shape{6, 5, 7, 9};
          Array x = Array::normal(shape, 0.5, 2.0, 51, dtype);
          if (channels_last) x = in_order(x, MemoryOrder::channels_last);
          const Array gamma = Array::uniform({5}, 0.5, 1.5, 52, Dtype::float32);
          const Array beta = Array::uniform({5}, -0.5, 0.5, 53, Dtype::float32);
          const Array r = residual ? Array::normal(shape, 0, 1, 54, dtype) : Array();
          const Array gy = Array::normal(shape, 0, 1, 55, dtype);
          const int64_t declines_before = kernels::cuda::dnn_batch_norm_declines();
          const BatchNormForwardResult host = ops::batch_normalization(x, gamma, beta, r, 1e-5, relu);
          const BatchNormForwardResult device = ops::batch_normalization(on_gpu(x), on_gpu(gamma), on_gpu(beta),
                                                                         residual ? on_gpu(r) : Array(), 1e-5, relu);
          check_close(device.y, host.y, tolerance(dtype), "y", Relative::to_largest);
          check_close(device.statistics.mean, host.statistics.mean, tolerance(dtype), "mean", Relative::to_largest);
          check_close(device.statistics.var, host.statistics.var, tolerance(dtype), "var", Relative::to_largest);
          const BatchNormGradients host_g =
              ops::batch_normalization_backward(x, gamma, gy, host.y, host.statistics, relu, true);
          const BatchNormGradients device_g = ops::batch_normalization_backward(
              on_gpu(x), on_gpu(gamma), on_gpu(gy), device.y, device.statistics, relu, true);
          check_close(device_g.gx, host_g.gx, 10 * tolerance(dtype), "gx", Relative::to_largest);
          check_close(parameter_gradient(device_g.ggamma), host_g.ggamma, 10 * tolerance(dtype), "ggamma", Relative::to_largest);
          check_close(parameter_gradient(device_g.gbeta), host_g.gbeta, 10 * tolerance(dtype), "gbeta", Relative::to_largest);
          // Where cuDNN's fused batch normalization is chosen, it ran (a decline is the slow path unseen).
          if (kernels::cuda::batch_norm_fusion(on_gpu(x), residual, relu)) {
            CHECK(kernels::cuda::dnn_batch_norm_declines() == declines_before);
          }
        }
      }
    }
  }
}

TEST_CASE("channel sums and affine maps equal the CPU's in 16-byte loads, single loads, many blocks, in groups") {
  struct Case {
    Shape shape;
    bool channels_last;
    Dtype dtype;
    int64_t misalign;  // elements the operands start past an aligned address (single loads)
  };
  const Case cases[] = {
      {{64, 64, 8, 8}, true, Dtype::float16, 0},    // 8 channels a load, 16 row groups
      {{256, 8, 16, 16}, false, Dtype::float32, 0},  // planes of 256 in loads of 4, 8 slices a channel
      {{16, 6, 7, 7}, false, Dtype::bfloat16, 0},   // planes of 49: one element a load
      {{512, 24}, false, Dtype::float64, 0},         // 2-D: channels innermost, 2 a load
      {{40, 12, 5, 5}, false, Dtype::float32, 1},    // misaligned: one element a load
      {{96, 40, 3, 3}, true, Dtype::bfloat16, 0},    // 5 loads a row
  };
  for (const Case& c : cases) {
    INFO(c.shape, (c.channels_last ? " channels-last " : " row-major "), dtype_name(c.dtype), " misaligned by ",
         c.misalign);
    // Dense operands on both sides, the device's starting c.misalign elements into their memory.
    const auto operand = [&](uint64_t seed) {
      const Array host = Array::normal(c.shape, 0.25, 1.5, seed, c.dtype);
      if (c.channels_last) {
        const Array ordered = in_order(host, MemoryOrder::channels_last);
        return std::pair{ordered, on_gpu(ordered)};
      }
      const Array flat = Array::zeros({host.size() + c.misalign}, c.dtype, gpu);
      const Array device = flat.get_item({Slice{c.misalign, host.size() + c.misalign}}).reshape(c.shape);
      device.assign(host.to(gpu));
      return std::pair{host, device};
    };
    const auto [hx, dx] = operand(71);
    const auto [hy, dy] = operand(72);
    const auto [hg, dg] = operand(73);
    const int64_t channels = c.shape[1];
    const Array a = Array::uniform({channels}, 0.5, 1.5, 74, Dtype::float64);
    const Array b = Array::uniform({channels}, -1, 1, 75, Dtype::float64);
    const Array d = Array::uniform({channels}, -0.5, 0.5, 76, Dtype::float64);
    const Array shift = Array::uniform({channels}, -0.5, 0.5, 77, Dtype::float64);
    const ChannelGate host_gate{hg, a, shift}, device_gate{dg, on_gpu(a), on_gpu(shift)};
    const double t = tolerance(c.dtype);
    for (const bool gated : {false, true}) {
      INFO((gated ? "gated" : "not gated"));
      const auto [hs, hp] = ops::channel_sums(hx, hy, gated ? host_gate : ChannelGate{});
      const auto [ds, dp] = ops::channel_sums(dx, dy, gated ? device_gate : ChannelGate{});
      check_close(ds, hs, t, "sums", Relative::to_largest);
      check_close(dp, hp, t, "products", Relative::to_largest);
      for (const bool relu : {false, true}) {
        const Array host_out = ops::channel_affine(hx, a, hy, b, d, gated ? host_gate : ChannelGate{}, relu);
        const Array device_out = ops::channel_affine(dx, on_gpu(a), dy, on_gpu(b), on_gpu(d),
                                                     gated ? device_gate : ChannelGate{}, relu);
        check_close(device_out, host_out, t, relu ? "affine, relu" : "affine", Relative::to_largest);
      }
      const Array host_single = ops::channel_affine(hx, a, Array(), Array(), d, gated ? host_gate : ChannelGate{});
      const Array device_single =
          ops::channel_affine(dx, on_gpu(a), Array(), Array(), on_gpu(d), gated ? device_gate : ChannelGate{});
      check_close(device_single, host_single, t, "affine without y", Relative::to_largest);
    }
    // Ghost batch normalization's groups of samples, each with its own coefficients, in one launch.
    const int64_t groups = 4;
    const Array ga = Array::uniform({groups, channels}, 0.5, 1.5, 78, Dtype::float64);
    const Array gd = Array::uniform({groups, channels}, -0.5, 0.5, 79, Dtype::float64);
    const ChannelGate host_groups{hg, ga, gd}, device_groups{dg, on_gpu(ga), on_gpu(gd)};
    const auto [hgs, hgp] = ops::group_channel_sums(hx, hy, groups, host_groups);
    const auto [dgs, dgp] = ops::group_channel_sums(dx, dy, groups, device_groups);
    check_close(dgs, hgs, t, "group sums", Relative::to_largest);
    check_close(dgp, hgp, t, "group products", Relative::to_largest);
    check_close(ops::group_channel_affine(dx, on_gpu(ga), dy, on_gpu(gd), on_gpu(ga), groups, device_groups, true),
                ops::group_channel_affine(hx, ga, hy, gd, ga, groups, host_groups, true), t, "group affine",
                Relative::to_largest);
  }
}

TEST_CASE("statistics and backward coefficients from channel sums equal the CPU's to the bit, one launch each") {
  // Per group and channel, from float64 sums: the device's kernel rounds every operation as the CPU's loop
  // does (batch_norm_functions.h), so the results are the same bits; gamma and beta of each floating dtype
  // and of two dtypes, (C,) and (G, C) sums, a clamped variance, the split batch's totals.
  const Shape shape{3, 37};
  const Array sums = Array::normal(shape, 0, 40, 61, Dtype::float64);
  Array square_sums = ops::add(ops::div(ops::square(sums), ops::scalar_like(12, sums)),
                               Array::uniform(shape, 0, 30, 62, Dtype::float64));
  square_sums.get_item({0, 5}).fill(0.0);  // Σx²/n below mean²: the variance clamps to 0
  const Array gy_sums = Array::normal(shape, 0, 10, 63, Dtype::float64);
  const Array gy_x_sums = Array::normal(shape, 0, 10, 64, Dtype::float64);
  const Array totals_beta = Array::normal(shape, 0, 20, 65, Dtype::float64);
  const Array totals_gamma = Array::normal(shape, 0, 20, 66, Dtype::float64);
  const auto same = [](const Array& device, const Array& host, const char* what) {
    INFO(what);
    CHECK(device.device() == gpu);
    CHECK(device.to_vector<double>() == host.to_vector<double>());
  };
  for (const Dtype gamma_dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
    for (const Dtype beta_dtype : {gamma_dtype, gamma_dtype == Dtype::float64 ? Dtype::float32 : Dtype::float64}) {
      for (const bool grouped : {false, true}) {
        INFO(dtype_name(gamma_dtype), " gamma, ", dtype_name(beta_dtype), " beta, ", grouped ? "(G, C)" : "(C,)");
        const auto part = [grouped](const Array& a) { return grouped ? a : a.get_item({1}).copy(); };
        const Array gamma = Array::uniform({37}, -2, 2, 67, gamma_dtype);
        const Array beta = Array::uniform({37}, -1, 1, 68, beta_dtype);
        const BatchNormStatistics host =
            ops::batch_norm_statistics_of_sums(part(sums), part(square_sums), 12, 1e-5, gamma, beta);
        const BatchNormStatistics device = ops::batch_norm_statistics_of_sums(
            on_gpu(part(sums)), on_gpu(part(square_sums)), 12, 1e-5, on_gpu(gamma), on_gpu(beta));
        same(device.mean, host.mean, "mean");
        same(device.var, host.var, "var");
        same(device.inv_std, host.inv_std, "inv_std");
        same(device.scale, host.scale, "scale");
        same(device.shift, host.shift, "shift");
        if (grouped) CHECK(host.var.get_item({0, 5}).item<double>() == 0.0);
        for (const bool totals : {false, true}) {
          INFO("totals ", totals);
          const auto coefficients = [&](const Array& gy, const Array& gy_x, const BatchNormStatistics& s,
                                        const Array& g, const auto& at) {
            return totals ? ops::batch_norm_backward_coefficients(at(part(gy)), at(part(gy_x)), s, g, true,
                                                                  at(part(totals_beta)), at(part(totals_gamma)))
                          : ops::batch_norm_backward_coefficients(at(part(gy)), at(part(gy_x)), s, g, true);
          };
          const BatchNormCoefficients h =
              coefficients(gy_sums, gy_x_sums, host, gamma, [](const Array& a) { return a; });
          const BatchNormCoefficients d =
              coefficients(gy_sums, gy_x_sums, device, on_gpu(gamma), [](const Array& a) { return on_gpu(a); });
          same(d.ggamma, h.ggamma, "ggamma");
          same(d.a, h.a, "a");
          same(d.b, h.b, "b");
          same(d.d, h.d, "d");
        }
        const BatchNormCoefficients gamma_only =
            ops::batch_norm_backward_coefficients(on_gpu(part(gy_sums)), on_gpu(part(gy_x_sums)), device, on_gpu(gamma),
                                                  false);
        CHECK_FALSE(gamma_only.a.defined());
        same(gamma_only.ggamma,
             ops::batch_norm_backward_coefficients(part(gy_sums), part(gy_x_sums), host, gamma, false).ggamma,
             "ggamma alone");
      }
    }
  }
}

TEST_CASE("running averages equal the CPU's to the bit, both in one launch, each dtype pair") {
  // 1,000 channels: several blocks. The products are rounded apart on both sides (batch_norm_functions.h).
  for (const Dtype averages : {Dtype::float32, Dtype::float64}) {
    for (const Dtype statistics : {Dtype::float32, Dtype::float64}) {
      INFO("averages ", averages, ", statistics ", statistics);
      const Array mean = Array::normal({1000}, 0, 3, 71, statistics);
      const Array var = Array::uniform({1000}, 0, 5, 72, statistics);
      const Array host_mean = Array::normal({1000}, 0, 1, 73, averages);
      const Array host_var = Array::uniform({1000}, 0.5, 2, 74, averages);
      const Array device_mean = on_gpu(host_mean), device_var = on_gpu(host_var);
      ops::batch_norm_running_averages(mean, var, 0.9, 0.1, 0.1 * 256 / 255, host_mean, host_var);
      ops::batch_norm_running_averages(on_gpu(mean), on_gpu(var), 0.9, 0.1, 0.1 * 256 / 255, device_mean,
                                       device_var);
      CHECK(device_mean.to_vector<double>() == host_mean.to_vector<double>());
      CHECK(device_var.to_vector<double>() == host_var.to_vector<double>());
    }
  }
}

TEST_CASE("more groups of samples than a launch takes are refused, naming the count") {
  const Array x = Array::zeros({65536, 2}, Dtype::float32, gpu);
  try {
    ops::group_channel_sums(x, x, 65536);
    FAIL("expected ValueError");
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()).find("at most 65535 groups of samples on a GPU, got 65536") != std::string::npos);
  }
}

TEST_CASE("2-D batch normalization (N, C) and a channel of one element equal the CPU's") {
  const Array x = Array::normal({64, 10}, 1.0, 3.0, 56, Dtype::float32);
  const Array gamma = Array::ones({10}), beta = Array::zeros({10});
  const BatchNormForwardResult host = ops::batch_normalization(x, gamma, beta, Array(), 2e-5, false);
  const BatchNormForwardResult device =
      ops::batch_normalization(on_gpu(x), on_gpu(gamma), on_gpu(beta), Array(), 2e-5, false);
  check_close(device.y, host.y, 2e-5, "y", Relative::to_largest);
  // One element per channel: mean x, variance 0, y exactly 0. Each side leaves a residue of float32's
  // rounding: the CPU's float32 partial sums give Σx² = fl(x²), so var = fl(x²) - x² (up to x²·2^-24,
  // 3.95e-9 here, where the device's is 0), and the affine map x·scale + shift with scale up to
  // 1/sqrt(eps) (316) rounds x·scale (the CPU's y of 2.01e-6 against the device's 0 on the H200). Both
  // are held to those bounds rather than to each other's residue.
  const Array single = Array::normal({1, 3, 1, 1}, 0, 1, 57, Dtype::float32);
  const Array g3 = Array::ones({3}), b3 = Array::zeros({3});
  const BatchNormForwardResult on_device =
      ops::batch_normalization(on_gpu(single), on_gpu(g3), on_gpu(b3), Array(), 1e-5, true);
  const BatchNormForwardResult on_host = ops::batch_normalization(single, g3, b3, Array(), 1e-5, true);
  const double largest = ops::amax(ops::abs(single)).item<double>();
  const double var_residue = 2 * largest * largest * std::ldexp(1.0, -24);
  const double y_residue = 4 * 316.3 * largest * std::ldexp(1.0, -24);
  const Array zero_var = Array::zeros(on_host.statistics.var.shape(), on_host.statistics.var.dtype());
  check_close(on_device.statistics.var, zero_var, var_residue, "variance of one element");
  check_close(on_device.y, Array::zeros(on_host.y.shape(), on_host.y.dtype()), y_residue, "y of one element");
  for (const double var : on_host.statistics.var.to_vector<double>()) CHECK(var <= var_residue);
  for (const double y : on_host.y.to_vector<double>()) CHECK(std::fabs(y) <= y_residue);
}

TEST_CASE("half-precision and channels-last float32 batch normalization run cuDNN's kernels, equal to the CPU's") {
  // cuDNN keeps a record for its backward in the statistics' state; the channel passes keep none.
  struct Case {
    Dtype dtype;
    bool channels_last, relu, residual, through_dnn;
  };
  const Case cases[] = {
      {Dtype::float16, true, false, false, true},   {Dtype::float16, true, true, false, true},
      {Dtype::float16, true, true, true, true},     {Dtype::float16, true, false, true, false},
      {Dtype::float16, false, false, false, true},  {Dtype::float16, false, true, false, false},
      {Dtype::bfloat16, true, false, false, true},  {Dtype::bfloat16, true, true, false, true},
      {Dtype::bfloat16, true, true, true, true},    {Dtype::bfloat16, false, true, false, false},
      {Dtype::float32, true, false, false, true},   {Dtype::float32, true, true, false, true},
      {Dtype::float32, true, true, true, true},     {Dtype::float32, false, true, false, false},
      {Dtype::float64, false, false, false, false},
  };
  const int64_t declines_before = kernels::cuda::dnn_batch_norm_declines();
  for (const Case& c : cases) {
    const std::string what = dtype_name(c.dtype) + (c.channels_last ? ", channels-last" : ", row-major") +
                             (c.relu ? ", relu" : "") + (c.residual ? ", residual" : "");
    INFO(what);
    const Shape shape{4, 8, 6, 5};
    Array x = Array::normal(shape, -0.25, 1.5, 61, c.dtype);
    if (c.channels_last) x = in_order(x, MemoryOrder::channels_last);
    const Array gamma = Array::uniform({8}, 0.5, 1.5, 62, Dtype::float32);
    const Array beta = Array::uniform({8}, -0.5, 0.5, 63, Dtype::float32);
    const Array r = c.residual ? Array::normal(shape, 0, 1, 64, c.dtype) : Array();
    const Array gy = Array::normal(shape, 0, 1, 65, c.dtype);
    const BatchNormForwardResult host = ops::batch_normalization(x, gamma, beta, r, 1e-5, c.relu);
    const BatchNormForwardResult device =
        ops::batch_normalization(on_gpu(x), on_gpu(gamma), on_gpu(beta), c.residual ? on_gpu(r) : Array(), 1e-5, c.relu);
    CHECK((device.statistics.state != nullptr) == c.through_dnn);
    // cuDNN's backward of its fused ReLU reads the output, which the caller is asked to keep.
    CHECK(device.statistics.backward_reads_output == (c.relu && (c.through_dnn || c.residual)));
    CHECK(memory_order_of(device.y) == memory_order_of(x));
    check_close(device.y, host.y, tolerance(c.dtype), "y", Relative::to_largest);
    check_close(device.statistics.mean, host.statistics.mean, tolerance(c.dtype), "mean", Relative::to_largest);
    check_close(device.statistics.var, host.statistics.var, tolerance(c.dtype), "var", Relative::to_largest);
    check_close(device.statistics.shift, host.statistics.shift, tolerance(c.dtype), "shift", Relative::to_largest);
    for (const bool need_gx : {true, false}) {
      const BatchNormGradients host_g =
          ops::batch_normalization_backward(x, gamma, gy, host.y, host.statistics, c.relu, need_gx);
      const BatchNormGradients device_g = ops::batch_normalization_backward(on_gpu(x), on_gpu(gamma), on_gpu(gy),
                                                                            device.y, device.statistics, c.relu, need_gx);
      check_close(device_g.gx, host_g.gx, 10 * tolerance(c.dtype), "gx", Relative::to_largest);
      check_close(parameter_gradient(device_g.ggamma), host_g.ggamma, 10 * tolerance(c.dtype), "ggamma", Relative::to_largest);
      check_close(parameter_gradient(device_g.gbeta), host_g.gbeta, 10 * tolerance(c.dtype), "gbeta", Relative::to_largest);
    }
    if (device.statistics.backward_reads_output) {
      CHECK_THROWS_AS(ops::batch_normalization_backward(on_gpu(x), on_gpu(gamma), on_gpu(gy), Array(),
                                                        device.statistics, c.relu, true),
                      ValueError);
    }
  }
  // Every fusion chosen ran in cuDNN, the backwards included (a decline falls back to the passes unseen).
  CHECK(kernels::cuda::dnn_batch_norm_declines() == declines_before);
}

TEST_CASE("cuDNN's batch normalization takes views that start off a 16-byte boundary") {
  // Sample 1 of a (5, 4, 5, 3) float16 channels-last array starts 60 elements (120 bytes) in.
  const Shape shape{4, 4, 5, 3};
  const int64_t sample = 4 * 5 * 3;
  const auto second_samples = [&](const Array& big) { return big.as_strided(shape, big.strides(), big.offset() + sample); };
  const auto big = [](uint64_t seed) {
    return in_order(Array::normal({5, 4, 5, 3}, 0.25, 1.5, seed, Dtype::float16), MemoryOrder::channels_last);
  };
  const Array x_big = big(81), r_big = big(82), gy_big = big(83);
  const Array x = second_samples(x_big), r = second_samples(r_big), gy = second_samples(gy_big);
  const Array x_gpu = second_samples(on_gpu(x_big)), r_gpu = second_samples(on_gpu(r_big));
  const Array gy_gpu = second_samples(on_gpu(gy_big));
  REQUIRE(reinterpret_cast<uintptr_t>(x_gpu.raw_data()) % 16 != 0);
  const int64_t declines_before = kernels::cuda::dnn_batch_norm_declines();
  const Array gamma = Array::uniform({4}, 0.5, 1.5, 84, Dtype::float32);
  const Array beta = Array::uniform({4}, -0.5, 0.5, 85, Dtype::float32);
  const BatchNormForwardResult host = ops::batch_normalization(x, gamma, beta, r, 1e-5, true);
  const BatchNormForwardResult device = ops::batch_normalization(x_gpu, on_gpu(gamma), on_gpu(beta), r_gpu, 1e-5, true);
  CHECK(device.statistics.state != nullptr);
  check_close(device.y, host.y, tolerance(Dtype::float16), "y", Relative::to_largest);
  check_close(device.statistics.var, host.statistics.var, tolerance(Dtype::float16), "var", Relative::to_largest);
  const BatchNormGradients host_g = ops::batch_normalization_backward(x, gamma, gy, host.y, host.statistics, true, true);
  const BatchNormGradients device_g =
      ops::batch_normalization_backward(x_gpu, on_gpu(gamma), gy_gpu, device.y, device.statistics, true, true);
  check_close(device_g.gx, host_g.gx, 10 * tolerance(Dtype::float16), "gx", Relative::to_largest);
  check_close(parameter_gradient(device_g.ggamma), host_g.ggamma, 10 * tolerance(Dtype::float16), "ggamma", Relative::to_largest);
  CHECK(kernels::cuda::dnn_batch_norm_declines() == declines_before);
}

TEST_CASE("channels-last float32 through cuDNN's persistent kernels keeps large-magnitude statistics") {
  // cuDNN documents that its persistent batch normalization may sum in scaled integers that very large
  // inputs overflow (to NaN): float32 activations of magnitude 1e3 ... 1e7, as an unnormalized layer gives.
  for (const double scale : {1e3, 1e5, 1e7}) {
    INFO("scale ", scale);
    const Shape shape{8, 16, 7, 7};
    const Array x = in_order(Array::normal(shape, 0.1 * scale, scale, 71, Dtype::float32), MemoryOrder::channels_last);
    const Array gamma = Array::uniform({16}, 0.5, 1.5, 72, Dtype::float32);
    const Array beta = Array::uniform({16}, -0.5, 0.5, 73, Dtype::float32);
    const BatchNormForwardResult host = ops::batch_normalization(x, gamma, beta, Array(), 1e-5, true);
    const BatchNormForwardResult device =
        ops::batch_normalization(on_gpu(x), on_gpu(gamma), on_gpu(beta), Array(), 1e-5, true);
    CHECK(device.statistics.state != nullptr);
    check_close(device.statistics.mean, host.statistics.mean, tolerance(Dtype::float32), "mean", Relative::to_largest);
    check_close(device.statistics.var, host.statistics.var, tolerance(Dtype::float32), "var", Relative::to_largest);
    check_close(device.y, host.y, tolerance(Dtype::float32), "y", Relative::to_largest);
  }
}
