#include "testing.h"

#include <cmath>

using namespace kusari;
using namespace kusari::testing;
namespace I = kusari::links::initializers;

namespace {
// (mean, standard deviation) of the elements.
std::pair<double, double> moments(const Array& a) {
  const std::vector<double> v = a.to_vector<double>();
  double mean = 0, sq = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, std::sqrt(sq / static_cast<double>(v.size()))};
}

Array filled(const L::Initializer& init, const Shape& shape) {
  Array a = Array::zeros(shape);
  init(a);
  return a;
}
}  // namespace

TEST_CASE("fans of dense and convolution shapes") {
  CHECK(I::fans({10, 20}) == std::pair<int64_t, int64_t>{20, 10});
  CHECK(I::fans({64, 3, 7, 7}) == std::pair<int64_t, int64_t>{3 * 49, 64 * 49});
  expect_error<ShapeError>([] { I::fans({5}); }, {"at least 2 axes", "(5,)"});
}

TEST_CASE("scaled initializers have the variance their papers give") {
  const Shape shape{256, 128, 3, 3};
  const double fan_in = 128 * 9, fan_out = 256 * 9;
  auto [m1, s1] = moments(filled(I::HeNormal(1.0, I::Fan::in, 1), shape));
  CHECK(std::abs(m1) < 0.002);
  CHECK(s1 == doctest::Approx(std::sqrt(2.0 / fan_in)).epsilon(0.02));
  auto [m2, s2] = moments(filled(I::LeCunNormal(1.0, 2), shape));
  CHECK(s2 == doctest::Approx(std::sqrt(1.0 / fan_in)).epsilon(0.02));
  auto [m3, s3] = moments(filled(I::GlorotUniform(1.0, 3), shape));
  CHECK(s3 == doctest::Approx(std::sqrt(6.0 / (fan_in + fan_out)) / std::sqrt(3.0)).epsilon(0.02));
  auto [m4, s4] = moments(filled(I::Normal(0.05, 4), shape));
  CHECK(s4 == doctest::Approx(0.05).epsilon(0.02));
  auto [m5, s5] = moments(filled(I::Uniform(0.3, 5), shape));
  CHECK(s5 == doctest::Approx(0.3 / std::sqrt(3.0)).epsilon(0.02));
}

TEST_CASE("a seed reproduces values; the default generator follows manual_seed") {
  CHECK(filled(I::HeNormal(1.0, I::Fan::in, 7), {4, 4}).to_vector<float>() ==
        filled(I::HeNormal(1.0, I::Fan::in, 7), {4, 4}).to_vector<float>());
  manual_seed(11);
  const auto first = filled(I::Normal(), {8, 8}).to_vector<float>();
  const auto second = filled(I::Normal(), {8, 8}).to_vector<float>();
  CHECK(first != second);
  manual_seed(11);
  CHECK(filled(I::Normal(), {8, 8}).to_vector<float>() == first);
}

TEST_CASE("constant initializers") {
  expect_values(filled(I::Constant(2.5), {3}), {2.5, 2.5, 2.5});
  expect_values(filled(I::Zero(), {2}), {0, 0});
  expect_values(filled(I::One(), {2}), {1, 1});
}
