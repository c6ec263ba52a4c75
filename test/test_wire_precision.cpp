// Wire precision suite: the averaging policies' factors, the one-process replay of the ring's
// arithmetic, and the bound the communicator's default float16 averaging keeps at 256 ranks on
// gradients recorded from ResNet-20 training on Fashion-MNIST.

#include "testing.h"

#include <cmath>
#include <limits>
#include <filesystem>

#include <kusari/distributed/wire_precision.h>
#include <kusari/distributed/detail/wire_scaling.h>
#include <kusari/kernels/cuda/runtime.h>

#include "../bench/gradient_samples.h"

using namespace kusari;
using namespace kusari::distributed;
using kusari::testing::expect_error;
using kusari::testing::skip_case;

namespace {

// P contributions of n values spread log-uniformly over [1e-6, 1e-1] with fixed signs, each rank's
// within ±10% of the others' (the spread of one element's gradient across micro-batches).
std::vector<Array> spread_contributions(int ranks, int64_t n, float scale = 1) {
  const std::vector<float> exponent = Array::uniform({n}, -6, -1, 7).to_vector<float>();
  std::vector<Array> out;
  for (int r = 0; r < ranks; ++r) {
    const std::vector<float> noise = Array::uniform({n}, -0.1, 0.1, 100 + static_cast<uint64_t>(r)).to_vector<float>();
    std::vector<float> values(static_cast<size_t>(n));
    for (size_t i = 0; i < values.size(); ++i) {
      const float sign = i % 2 == 0 ? 1.0f : -1.0f;
      values[i] = scale * sign * std::pow(10.0f, exponent[i]) * (1 + noise[i]);
    }
    out.push_back(Array::from_vector<float>(values, {n}));
  }
  return out;
}

// The checks the goal makes of the default float16 averaging.
void expect_within_goal(const WirePrecision& p) {
  CHECK(p.p90_rel_err <= 0.01);
  CHECK(p.zero_fraction <= 0.001);
  CHECK(p.overflow == 0);
}

}  // namespace

TEST_CASE("averaging_scaling: factors multiply to 1/P; automatic float16 takes the largest power of two in range") {
  for (const int ranks : {1, 2, 3, 256, 1024}) {
    for (const AveragingPolicy policy : averaging_policies()) {
      for (const Dtype wire : {Dtype::float16, Dtype::bfloat16, Dtype::float32}) {
        const WireScaling s = averaging_scaling(policy, wire, ranks, 0.37f);
        INFO(averaging_policy_name(policy), " ", wire, " P=", ranks);
        CHECK(static_cast<double>(s.prescale) * s.postscale * ranks == doctest::Approx(1).epsilon(1e-6));
      }
    }
    const WireScaling a = averaging_scaling(AveragingPolicy::automatic, Dtype::float16, ranks, 0.37f);
    const double largest_partial_sum = ranks * 0.37 * a.prescale;
    CHECK(largest_partial_sum <= 65504.0 / 2);
    CHECK(largest_partial_sum > 65504.0 / 4);
    CHECK(std::log2(a.prescale) == std::floor(std::log2(a.prescale)));
  }
  const WireScaling plain = averaging_scaling(AveragingPolicy::automatic, Dtype::bfloat16, 8, 1e-9f);
  CHECK(plain.prescale == 1.0f);
  CHECK(plain.postscale == 0.125f);
  const WireScaling infinite = averaging_scaling(AveragingPolicy::automatic, Dtype::float16, 8, INFINITY);
  CHECK(infinite.prescale == 0.125f);
  CHECK(infinite.postscale == 1.0f);
  CHECK(averaging_scaling(AveragingPolicy::automatic, Dtype::float16, 8, 0).postscale == 0.125f);
  CHECK(averaging_policy_from_name("split") == AveragingPolicy::split);
  expect_error<ValueError>([] { averaging_policy_from_name("mean"); }, {"automatic", "divide_before", "'mean'"});
}

TEST_CASE("automatic_float16_scaling: the host's factors bit for bit, computed where the largest magnitude lives") {
  std::vector<float> largest = {0.0f, INFINITY, NAN, 1e-38f, 1e-30f, 3e38f, std::numeric_limits<float>::max(), 0.37f,
                                1.0f, 65504.0f, 1e-5f, 123456.0f};
  for (const int k : {-40, -3, 0, 1, 7, 13, 40}) {  // at the powers of two the bound's quotient crosses
    const float at = static_cast<float>(std::ldexp(65504.0 / 2, -k));
    for (const int ranks : {1, 3}) {
      const float m = at / static_cast<float>(ranks);
      largest.insert(largest.end(), {m, std::nextafter(m, 0.0f), std::nextafter(m, INFINITY)});
    }
  }
  std::vector<Device> devices = {Device::cpu(), Device::loopback(0)};
  if (kusari::cuda::device_count() > 0) devices.push_back(Device::cuda(0));
  for (const Device& device : devices) {
    for (const int ranks : {1, 2, 3, 7, 256, 1024}) {
      for (const float m : largest) {
        CAPTURE(device);
        CAPTURE(ranks);
        CAPTURE(m);
        const WireScaling want = averaging_scaling(AveragingPolicy::automatic, Dtype::float16, ranks, m);
        const ScalingArrays got = automatic_float16_scaling(Array::scalar(m, Dtype::float32, device), ranks);
        CHECK(got.prescale.device() == device);
        CHECK(got.postscale.device() == device);
        CHECK(got.prescale.item<float>() == want.prescale);
        CHECK(got.postscale.item<float>() == want.postscale);
        if (std::isfinite(m) && m > 0 && want.prescale > std::ldexp(1.0f, -60) && want.prescale < std::ldexp(1.0f, 60)) {
          // In range: the partial sums' bound holds and a factor of 2 more would break it.
          const double partial = static_cast<double>(ranks) * m * want.prescale;
          CHECK(partial <= 65504.0 / 2);
          CHECK(2 * partial > 65504.0 / 2);
        }
      }
    }
  }
  expect_error<ValueError>([] { automatic_float16_scaling(Array::zeros({1}, Dtype::float32), 2); },
                           {"0-dimensional float32", "shape (1,)"});
}

TEST_CASE("simulate_wire_average: exact where the sums are exact; bad input named") {
  const std::vector<Array> halves(4, Array::full({5}, 0.5, Dtype::float32));
  for (const AveragingPolicy policy : averaging_policies()) {
    const WirePrecision p = simulate_wire_average(halves, Dtype::float16, policy);
    CHECK(p.p90_rel_err == 0);
    CHECK(p.zero_fraction == 0);
    CHECK(p.overflow == 0);
  }
  expect_error<ValueError>([] { simulate_wire_average({}, Dtype::float16, AveragingPolicy::automatic); },
                           {"at least one"});
  expect_error<ShapeError>([] {
    simulate_wire_average({Array::zeros({3}), Array::zeros({4})}, Dtype::float16, AveragingPolicy::automatic);
  }, {"3 elements", "got 4", "rank 1"});
  expect_error<DtypeError>([] {
    simulate_wire_average({Array::zeros({3}, Dtype::float64)}, Dtype::float16, AveragingPolicy::automatic);
  }, {"float32", "float64", "rank 0"});
  expect_error<DtypeError>([] { simulate_wire_average({Array::zeros({3})}, Dtype::float64, AveragingPolicy::split); },
                           {"wire", "float64"});
}

TEST_CASE("float16 at 1024 ranks, values over 1e-6..1e-1: divide_before loses the small, divide_after overflows "
          "when loss-scaled, automatic does neither") {
  // Same-signed values make every partial sum grow with the ranks, so rounding alone (alike under every
  // policy) costs a few percent here; what a policy decides is what vanishes and what overflows.
  const std::vector<Array> raw = spread_contributions(1024, 2000);
  const WirePrecision before = simulate_wire_average(raw, Dtype::float16, AveragingPolicy::divide_before);
  const WirePrecision after = simulate_wire_average(raw, Dtype::float16, AveragingPolicy::divide_after);
  const WirePrecision automatic = simulate_wire_average(raw, Dtype::float16, AveragingPolicy::automatic);
  MESSAGE("divide_before: zero_fraction=", before.zero_fraction, " p90_rel_err=", before.p90_rel_err,
          "; automatic: zero_fraction=", automatic.zero_fraction, " p90_rel_err=", automatic.p90_rel_err);
  CHECK(before.zero_fraction > 0.1);
  CHECK(before.p90_rel_err == 1);
  CHECK(automatic.zero_fraction <= 0.001);
  CHECK(automatic.overflow == 0);
  CHECK(automatic.p90_rel_err <= after.p90_rel_err * 1.01);

  const std::vector<Array> loss_scaled = spread_contributions(1024, 2000, 65536);
  CHECK(simulate_wire_average(loss_scaled, Dtype::float16, AveragingPolicy::divide_after).overflow > 0);
  const WirePrecision scaled = simulate_wire_average(loss_scaled, Dtype::float16, AveragingPolicy::automatic);
  CHECK(scaled.overflow == 0);
  CHECK(scaled.zero_fraction <= 0.001);
  CHECK(scaled.p90_rel_err == doctest::Approx(automatic.p90_rel_err).epsilon(0.05));
}

TEST_CASE("float16 default averaging at 256 ranks on recorded ResNet-20 gradients: p90 <= 1%, zeros <= 0.1%, "
          "no overflow, raw and loss-scaled") {
  if (!std::filesystem::exists(data::kFashionMnistDir)) {
    skip_case(cat(data::kFashionMnistDir, " is absent (Debian package dataset-fashion-mnist)"));
    return;
  }
  const auto train = data::fashion_mnist(true);
  auto model = std::make_shared<L::models::ResNet>(20, 1, 10);
  const bench::GradientSamples samples = bench::record_gradient_samples(
      model, train->arrays()[0], train->arrays()[1], /*steps=*/10, /*batch=*/128, /*ranks=*/256, /*micro=*/16,
      /*stride=*/8);
  const AveragingPolicy default_policy = CommunicatorOptions{}.averaging;
  for (const float scale : {1.0f, samples.loss_scale}) {
    INFO("gradients times ", scale);
    const bench::RankSubset set = bench::first_ranks(samples, 256, scale);
    const WirePrecision p = simulate_wire_average(set.contributions, Dtype::float16, default_policy, set.max_abs);
    MESSAGE("scale ", scale, ": median_rel_err=", p.median_rel_err, " p90_rel_err=", p.p90_rel_err,
            " zero_fraction=", p.zero_fraction, " overflow=", p.overflow);
    expect_within_goal(p);
  }
  // The loss-scaled set is one whose plain sum overflows float16.
  const bench::RankSubset scaled = bench::first_ranks(samples, 256, samples.loss_scale);
  CHECK(simulate_wire_average(scaled.contributions, Dtype::float16, AveragingPolicy::divide_after, scaled.max_abs)
            .overflow > 0);
}
