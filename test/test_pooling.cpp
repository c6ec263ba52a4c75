#include <cmath>
#include <limits>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

// Output extent by the definition: windows start every `stride` from -pad while they fit in the padded
// input; cover_all also keeps a last window that starts inside it.
int64_t expected_extent(int64_t size, int64_t kernel, int64_t stride, int64_t pad, bool cover_all) {
  int64_t count = 0;
  while (count * stride + kernel <= size + 2 * pad) ++count;
  if (cover_all && count > 0 && (count - 1) * stride + kernel < size + 2 * pad) ++count;
  return count;
}

// Pooling by its definition in float64: max over the window's input elements (-inf when it has none), or
// their sum divided by the window area.
Array naive_pooling(const Array& x_in, F::Int2 k, F::Int2 s, F::Int2 p, bool cover_all, bool take_max) {
  const std::vector<double> x = x_in.to_vector<double>();
  const Shape& shape = x_in.shape();
  const int64_t planes = shape[0] * shape[1], h = shape[2], w = shape[3];
  const int64_t oh = expected_extent(h, k.h, s.h, p.h, cover_all), ow = expected_extent(w, k.w, s.w, p.w, cover_all);
  std::vector<double> y;
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        double acc = take_max ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t ki = 0; ki < k.h; ++ki) {
          for (int64_t kj = 0; kj < k.w; ++kj) {
            const int64_t iy = i * s.h - p.h + ki, ix = j * s.w - p.w + kj;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            const double v = x[static_cast<size_t>((plane * h + iy) * w + ix)];
            acc = take_max ? std::max(acc, v) : acc + v;
          }
        }
        y.push_back(take_max ? acc : acc / static_cast<double>(k.h * k.w));
      }
    }
  }
  return Array::from_vector(y, Shape{shape[0], shape[1], oh, ow});
}

// Distinct values at least 0.1 apart in a scrambled order, so that finite differences keep every argmax.
Array distinct_values(const Shape& shape) {
  const int64_t n = shape.numel();
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(static_cast<double>((i * 37 + 11) % n) * 0.1 - 0.05 * n);
  return Array::from_vector(values, shape);
}

// One configuration of the window tests.
struct Window {
  const char* name;
  Shape x;
  F::Int2 ksize, stride, pad;
};

const std::vector<Window> kWindows = {
    {"non-overlapping", {2, 3, 6, 4}, 2, 2, 0},
    {"overlapping", {2, 2, 7, 6}, 3, 2, 0},
    {"padded", {1, 3, 5, 5}, 3, 2, 1},
    {"rectangular", {2, 2, 6, 7}, {3, 2}, {1, 2}, {1, 0}},
    {"stride past the window", {1, 2, 7, 7}, 2, 3, 0},
};

}  // namespace

TEST_CASE("max_pooling_2d matches the definition, with and without cover_all") {
  for (const Window& c : kWindows) {
    INFO("case ", c.name);
    const Array x = random(c.x, 1);
    for (bool cover_all : {true, false}) {
      INFO("cover_all ", cover_all);
      const Variable y = F::max_pooling_2d(Variable(x), c.ksize, c.stride, c.pad, cover_all);
      expect_close(y.data(), naive_pooling(x, c.ksize, c.stride, c.pad, cover_all, true), 0, 0);
    }
  }
  const Array x = random({1, 1, 5, 5}, 2);
  expect_close(F::max_pooling_2d(Variable(x), 2).data(), naive_pooling(x, 2, 2, 0, true, true), 0, 0);
}

TEST_CASE("max_pooling_2d gives -inf and no gradient for a window wholly outside the input") {
  const Variable x(random({1, 1, 5, 5}, 3));
  Variable y = F::max_pooling_2d(x, 1, 3, 0, true);
  REQUIRE(y.shape() == Shape{1, 1, 3, 3});
  const std::vector<double> values = y.data().to_vector<double>();
  CHECK(values[8] == -std::numeric_limits<double>::infinity());
  y.set_grad(Array::ones(y.shape(), Dtype::float64));
  y.backward();
  CHECK(ops::sum(x.grad()).item<double>() == 4.0);
}

TEST_CASE("max_pooling_2d routes gradients to the maxima, to any order") {
  for (const Window& c : kWindows) {
    INFO("case ", c.name);
    check_gradients(unary([&](const Variable& x) { return F::max_pooling_2d(x, c.ksize, c.stride, c.pad); }),
                    {distinct_values(c.x)});
  }
}

TEST_CASE("average_pooling_2d matches the definition, padding counted in the divisor") {
  for (const Window& c : kWindows) {
    INFO("case ", c.name);
    const Array x = random(c.x, 4);
    const Variable y = F::average_pooling_2d(Variable(x), c.ksize, c.stride, c.pad);
    expect_close(y.data(), naive_pooling(x, c.ksize, c.stride, c.pad, false, false), 1e-14, 1e-14);
    check_gradients(unary([&](const Variable& v) { return F::average_pooling_2d(v, c.ksize, c.stride, c.pad); }),
                    {x});
  }
  const Variable x(Array::ones({1, 1, 2, 2}, Dtype::float64));
  expect_values(F::average_pooling_2d(x, 2, 2, 1).data(), {0.25, 0.25, 0.25, 0.25});
  expect_values(F::average_pooling_2d(x, 2).data(), {1.0});
}

TEST_CASE("global_average_pooling_2d averages over height and width") {
  const Variable x(Array::arange(0, 24, 1, Dtype::float64).reshape({2, 3, 2, 2}));
  const Variable y = F::global_average_pooling_2d(x);
  CHECK(y.shape() == Shape{2, 3});
  expect_values(y.data(), {1.5, 5.5, 9.5, 13.5, 17.5, 21.5});
  check_gradients(unary(F::global_average_pooling_2d), {random({2, 3, 3, 2}, 5)});
}

TEST_CASE("pooling forward in float32, float16 and bfloat16") {
  const Array x = random({2, 3, 5, 5}, 6);
  check_forward_dtypes(unary([](const Variable& v) { return F::max_pooling_2d(v, 3, 2, 1); }), {x});
  check_forward_dtypes(unary([](const Variable& v) { return F::average_pooling_2d(v, 3, 2, 1); }), {x});
  check_forward_dtypes(unary(F::global_average_pooling_2d), {x});
}

TEST_CASE("pooling errors name the shapes") {
  const Variable x(Array::zeros({2, 3, 4, 5}));
  expect_error<ShapeError>([&] { F::max_pooling_2d(x, {6, 2}, 1); },
                           {"max_pooling_2d", "window (6, 2)", "padded input (4, 5)", "(2, 3, 4, 5)"});
  expect_error<ShapeError>([&] { F::average_pooling_2d(x, {4, 6}, 1, {1, 0}); },
                           {"average_pooling_2d", "window (4, 6)", "padded input (6, 5)", "(2, 3, 4, 5)"});
  expect_error<ShapeError>([&] { F::max_pooling_2d(Variable(Array::zeros({3, 4, 5})), 2); },
                           {"max_pooling_2d", "4 axes", "(3, 4, 5)"});
  expect_error<DtypeError>([&] { F::average_pooling_2d(Variable(Array::zeros({1, 1, 2, 2}, Dtype::int32)), 2); },
                           {"average_pooling_2d", "floating", "int32"});
  expect_error<ValueError>([&] { F::max_pooling_2d(x, 2, 0); }, {"max_pooling_2d", "stride", "(0, 0)"});
  expect_error<ShapeError>([&] { F::global_average_pooling_2d(Variable(Array::zeros({2, 3}))); },
                           {"global_average_pooling_2d", "(2, 3)"});
}

TEST_CASE("max pooling's gradient routines check shapes against the recorded winners") {
  const Array x = random({1, 2, 4, 4}, 5);
  const MaxPool2dResult pooled = ops::max_pooling_2d(x, {.kernel_h = 2, .kernel_w = 2, .stride_h = 2, .stride_w = 2},
                                                     Shape{1, 2, 2, 2});
  const Array gy = Array::ones({1, 2, 2, 2}, Dtype::float64);
  CHECK(ops::max_pooling_2d_scatter(gy, *pooled.winners, x.shape()).shape() == x.shape());
  expect_error<ShapeError>([&] { ops::max_pooling_2d_scatter(Array::ones({1, 2, 2, 1}, Dtype::float64),
                                                             *pooled.winners, x.shape()); },
                           {"max_pool2d_scatter", "(1, 2, 2, 2)", "(1, 2, 2, 1)"});
  expect_error<ShapeError>([&] { ops::max_pooling_2d_scatter(gy, *pooled.winners, Shape{1, 2, 4, 5}); },
                           {"max_pool2d_scatter", "(1, 2, 4, 4)", "(1, 2, 4, 5)"});
  expect_error<ShapeError>([&] { ops::max_pooling_2d_gather(random({1, 2, 5, 4}, 6), *pooled.winners); },
                           {"max_pool2d_gather", "(1, 2, 4, 4)", "(1, 2, 5, 4)"});
}
