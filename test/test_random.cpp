// The counter-based generator: Philox4x32-10 known answers, per-seed determinism independent of the
// thread count, and the statistics of Array::uniform and Array::normal.

#include <cmath>

#include "testing.h"

using namespace kusari;

namespace {

using Block = std::array<uint32_t, 4>;

// Sample mean and standard deviation.
std::pair<double, double> moments(const std::vector<double>& v) {
  double sum = 0, squares = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  for (double x : v) squares += (x - mean) * (x - mean);
  return {mean, std::sqrt(squares / static_cast<double>(v.size() - 1))};
}

// Values of the same draw made on 1 and on 2 threads.
template <class Draw>
std::pair<std::vector<double>, std::vector<double>> on_one_and_two_threads(Draw draw) {
  const int original = get_num_threads();
  set_num_threads(1);
  std::vector<double> one = draw().template to_vector<double>();
  set_num_threads(2);
  std::vector<double> two = draw().template to_vector<double>();
  set_num_threads(original);
  return {one, two};
}

constexpr int64_t kCount = 1 << 18;

// How many doubles lie between a and b (0 when equal).
uint64_t ulps_apart(double a, double b) {
  uint64_t steps = 0;
  for (double x = std::min(a, b); x < std::max(a, b) && steps < 100; x = std::nextafter(x, b > a ? b : a)) ++steps;
  return steps;
}

}  // namespace

TEST_CASE("philox4x32-10 reproduces the Random123 known-answer vectors") {
  CHECK(philox4x32({0, 0, 0, 0}, {0, 0}) == Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("element i of a draw is a pure function of (seed, i)") {
  const Array u = Array::uniform({3, 5}, -2, 6, 42, Dtype::float64);
  const Array n = Array::normal({15}, 1, 0.5, 42, Dtype::float64);
  const std::vector<double> uv = u.to_vector<double>(), nv = n.to_vector<double>();
  for (uint64_t i = 0; i < 15; ++i) {
    CHECK(uv[i] == -2 + 8 * uniform_at(42, i));
    // A normal's log and cos are each device's libm: equal on the host's kernels, within their last
    // bits on a GPU's (random_draw.h).
    const uint64_t libm_ulps = default_device().type == DeviceType::cuda ? 2 : 0;
    CHECK(ulps_apart(nv[i], std::fma(0.5, normal_at(42, i), 1.0)) <= libm_ulps);
  }
  // A longer draw starts with the shorter one.
  const std::vector<double> longer = Array::uniform({40}, -2, 6, 42, Dtype::float64).to_vector<double>();
  CHECK(std::vector<double>(longer.begin(), longer.begin() + 15) == uv);
  for (uint64_t i = 0; i < 1000; ++i) {
    const double x = uniform_at(7, i);
    CHECK((x >= 0 && x < 1));
  }
}

TEST_CASE("the same seed gives the same array, another seed another one") {
  for (Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::bfloat16, Dtype::float64}) {
    INFO("dtype ", dtype);
    const std::vector<double> a = Array::normal({1000}, 0, 1, 5, dtype).to_vector<double>();
    CHECK(a == Array::normal({1000}, 0, 1, 5, dtype).to_vector<double>());
    CHECK(a != Array::normal({1000}, 0, 1, 6, dtype).to_vector<double>());
    const std::vector<double> b = Array::uniform({10, 100}, 0, 1, 5, dtype).to_vector<double>();
    CHECK(b == Array::uniform({10, 100}, 0, 1, 5, dtype).to_vector<double>());
    CHECK(b != Array::uniform({10, 100}, 0, 1, (uint64_t{1} << 32) + 5, dtype).to_vector<double>());
  }
  // Neighbouring seeds are uncorrelated.
  const std::vector<double> x = Array::normal({kCount}, 0, 1, 100, Dtype::float64).to_vector<double>();
  const std::vector<double> y = Array::normal({kCount}, 0, 1, 101, Dtype::float64).to_vector<double>();
  double dot = 0;
  for (size_t i = 0; i < x.size(); ++i) dot += x[i] * y[i];
  CHECK(std::abs(dot / kCount) < 5 / std::sqrt(static_cast<double>(kCount)));
}

TEST_CASE("draws are identical on 1 and 2 threads") {
  for (Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::float64}) {
    INFO("dtype ", dtype);
    const auto [u1, u2] = on_one_and_two_threads([&] { return Array::uniform({kCount}, -1, 1, 9, dtype); });
    CHECK(u1 == u2);
    const auto [n1, n2] = on_one_and_two_threads([&] { return Array::normal({512, 512}, 3, 2, 9, dtype); });
    CHECK(n1 == n2);
  }
}

TEST_CASE("uniform values have the moments of U[low, high) and stay inside it") {
  const std::vector<double> v = Array::uniform({kCount}, -1, 3, 21).to_vector<double>();
  const auto [mean, stddev] = moments(v);
  const double expected_std = 4 / std::sqrt(12.0);
  CHECK(std::abs(mean - 1) < 5 * expected_std / std::sqrt(static_cast<double>(kCount)));
  CHECK(std::abs(stddev - expected_std) < 0.01);
  CHECK(*std::min_element(v.begin(), v.end()) >= -1);
  CHECK(*std::max_element(v.begin(), v.end()) < 3);
  CHECK(*std::min_element(v.begin(), v.end()) < -0.999);
  CHECK(*std::max_element(v.begin(), v.end()) > 2.999);
  // Each tenth of the range holds about a tenth of the draws.
  std::vector<int64_t> bins(10, 0);
  for (double x : v) ++bins[static_cast<size_t>((x + 1) / 0.4)];
  for (int64_t count : bins) CHECK(std::abs(static_cast<double>(count) / kCount - 0.1) < 0.005);
}

TEST_CASE("uniform never returns high, even where rounding to the dtype would reach it") {
  // Near 1, float16 steps by 2^-11: an unguarded draw would round up to 1 about 16 times in 65536.
  for (Dtype dtype : {Dtype::float16, Dtype::bfloat16}) {
    INFO("dtype ", dtype);
    const std::vector<double> v = Array::uniform({1 << 16}, 0, 1, 3, dtype).to_vector<double>();
    CHECK(*std::max_element(v.begin(), v.end()) < 1);
    CHECK(*std::min_element(v.begin(), v.end()) >= 0);
  }
  // float32 is spaced 8 apart around 1e8, so a sixteenth of these draws would round to high.
  const std::vector<double> coarse = Array::uniform({4096}, 1e8 - 64, 1e8, 4).to_vector<double>();
  CHECK(*std::max_element(coarse.begin(), coarse.end()) == 1e8 - 8);
  CHECK(*std::min_element(coarse.begin(), coarse.end()) == 1e8 - 64);
}

TEST_CASE("normal values have the requested mean and standard deviation") {
  const std::vector<double> v = Array::normal({kCount}, 2, 0.5, 31, Dtype::float64).to_vector<double>();
  const auto [mean, stddev] = moments(v);
  CHECK(std::abs(mean - 2) < 5 * 0.5 / std::sqrt(static_cast<double>(kCount)));
  CHECK(std::abs(stddev - 0.5) < 5 * 0.5 / std::sqrt(2.0 * kCount));
  int64_t within_one = 0, within_two = 0;
  for (double x : v) {
    within_one += std::abs(x - 2) < 0.5;
    within_two += std::abs(x - 2) < 1.0;
  }
  CHECK(std::abs(static_cast<double>(within_one) / kCount - 0.6827) < 0.005);
  CHECK(std::abs(static_cast<double>(within_two) / kCount - 0.9545) < 0.003);
  const auto [mean32, stddev32] = moments(Array::normal({kCount}, -1, 3, 32).to_vector<double>());
  CHECK(std::abs(mean32 + 1) < 5 * 3 / std::sqrt(static_cast<double>(kCount)));
  CHECK(std::abs(stddev32 - 3) < 0.03);
  for (double x : v) {
    if (!std::isfinite(x)) FAIL_CHECK("non-finite normal draw");
  }
}

TEST_CASE("a Generator hands out consecutive counters and can be restored") {
  Generator g(17);
  CHECK(g.seed() == 17);
  CHECK(g.offset() == 0);
  CHECK(g.advance(10) == 0);
  CHECK(g.advance(5) == 10);
  CHECK(g.offset() == 15);
  g.set_state(3, 99);
  CHECK(g.seed() == 3);
  CHECK(g.advance(1) == 99);
  manual_seed(123);
  CHECK(default_generator().seed() == 123);
  CHECK(default_generator().offset() == 0);
  default_generator().advance(4);
  manual_seed(123);
  CHECK(default_generator().offset() == 0);
}
