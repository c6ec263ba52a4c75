#include <cmath>
#include <functional>
#include <thread>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;
using F::Convolution2DParams;

namespace {

// A float64 host copy of an NCHW (or OIHW) array with 4-index access.
struct Grid {
  std::vector<double> values;
  Shape shape;

  explicit Grid(const Array& a) : values(a.to_vector<double>()), shape(a.shape()) {}
  explicit Grid(const Shape& s) : values(static_cast<size_t>(s.numel()), 0.0), shape(s) {}
  double& at(int64_t a, int64_t b, int64_t c, int64_t d) {
    return values[static_cast<size_t>(((a * shape[1] + b) * shape[2] + c) * shape[3] + d)];
  }
  Array array() const { return Array::from_vector(values, shape); }
};

// Output extent by the definition: windows start every `stride` from -pad while the dilated kernel still
// fits in the padded input; cover_all also keeps a last window that starts inside it.
int64_t expected_extent(int64_t size, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool cover_all) {
  const int64_t span = (kernel - 1) * dilation + 1;
  int64_t count = 0;
  while (count * stride + span <= size + 2 * pad) ++count;
  if (cover_all && count > 0 && (count - 1) * stride + span < size + 2 * pad) ++count;
  return count;
}

// Convolution by its definition, in float64 loops over every index.
Array naive_convolution(const Array& x_in, const Array& w_in, const Array& b_in, const Convolution2DParams& p) {
  Grid x(x_in), w(w_in);
  const int64_t n_count = x.shape[0], c_count = x.shape[1], out_channels = w.shape[0];
  const int64_t kh = w.shape[2], kw = w.shape[3], group_in = c_count / p.groups;
  const int64_t oh = expected_extent(x.shape[2], kh, p.stride.h, p.pad.h, p.dilation.h, p.cover_all);
  const int64_t ow = expected_extent(x.shape[3], kw, p.stride.w, p.pad.w, p.dilation.w, p.cover_all);
  const std::vector<double> b = b_in.defined() ? b_in.to_vector<double>() : std::vector<double>(out_channels, 0.0);
  Grid y(Shape{n_count, out_channels, oh, ow});
  for (int64_t n = 0; n < n_count; ++n) {
    for (int64_t o = 0; o < out_channels; ++o) {
      const int64_t group = o / (out_channels / p.groups);
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          double sum = b[static_cast<size_t>(o)];
          for (int64_t c = 0; c < group_in; ++c) {
            for (int64_t ki = 0; ki < kh; ++ki) {
              for (int64_t kj = 0; kj < kw; ++kj) {
                const int64_t iy = i * p.stride.h - p.pad.h + ki * p.dilation.h;
                const int64_t ix = j * p.stride.w - p.pad.w + kj * p.dilation.w;
                if (iy < 0 || iy >= x.shape[2] || ix < 0 || ix >= x.shape[3]) continue;
                sum += x.at(n, group * group_in + c, iy, ix) * w.at(o, c, ki, kj);
              }
            }
          }
          y.at(n, o, i, j) = sum;
        }
      }
    }
  }
  return y.array();
}

// Transposed convolution by its definition: every x element scatters its products into the output.
Array naive_deconvolution(const Array& x_in, const Array& w_in, const Array& b_in, const Convolution2DParams& p,
                          int64_t out_h, int64_t out_w) {
  Grid x(x_in), w(w_in);
  const int64_t group_in = x.shape[1] / p.groups, group_out = w.shape[1];
  const int64_t out_channels = group_out * p.groups;
  Grid y(Shape{x.shape[0], out_channels, out_h, out_w});
  for (int64_t n = 0; n < x.shape[0]; ++n) {
    for (int64_t c = 0; c < x.shape[1]; ++c) {
      const int64_t group = c / group_in;
      for (int64_t i = 0; i < x.shape[2]; ++i) {
        for (int64_t j = 0; j < x.shape[3]; ++j) {
          for (int64_t o = 0; o < group_out; ++o) {
            for (int64_t ki = 0; ki < w.shape[2]; ++ki) {
              for (int64_t kj = 0; kj < w.shape[3]; ++kj) {
                const int64_t iy = i * p.stride.h - p.pad.h + ki * p.dilation.h;
                const int64_t ix = j * p.stride.w - p.pad.w + kj * p.dilation.w;
                if (iy < 0 || iy >= out_h || ix < 0 || ix >= out_w) continue;
                y.at(n, group * group_out + o, iy, ix) += x.at(n, c, i, j) * w.at(c, o, ki, kj);
              }
            }
          }
        }
      }
    }
  }
  if (b_in.defined()) {
    const std::vector<double> b = b_in.to_vector<double>();
    for (size_t k = 0; k < y.values.size(); ++k) {
      y.values[k] += b[static_cast<size_t>(static_cast<int64_t>(k) / (out_h * out_w) % out_channels)];
    }
  }
  return y.array();
}

// One configuration of the value tests.
struct Case {
  const char* name;
  Shape x, w;
  Convolution2DParams params;
  bool bias = true;
};

const std::vector<Case> kCases = {
    {"plain", {2, 3, 6, 5}, {4, 3, 3, 3}, {}},
    {"stride and pad", {2, 3, 7, 6}, {4, 3, 3, 2}, {.stride = {2, 1}, .pad = {1, 2}}},
    {"dilation", {1, 2, 8, 7}, {3, 2, 3, 2}, {.pad = 1, .dilation = {2, 3}}},
    {"groups", {2, 4, 5, 5}, {6, 2, 3, 3}, {.pad = 1, .groups = 2}},
    {"depthwise", {2, 3, 5, 4}, {3, 1, 2, 2}, {.stride = 2, .groups = 3}},
    {"cover_all", {1, 2, 6, 6}, {3, 2, 3, 3}, {.stride = 2, .cover_all = true}},
    {"cover_all with pad and dilation", {2, 2, 7, 9}, {2, 2, 2, 3},
     {.stride = 3, .pad = 1, .dilation = 2, .cover_all = true}},
    {"no bias", {2, 3, 5, 5}, {2, 3, 3, 3}, {.stride = 2, .pad = 1}, false},
    {"1x1", {3, 4, 3, 5}, {5, 4, 1, 1}, {}},
    {"1x1 groups", {2, 4, 3, 3}, {6, 2, 1, 1}, {.groups = 2}},
    {"1x1 strided", {2, 3, 5, 5}, {2, 3, 1, 1}, {.stride = 2}},
    {"large batch", {7, 2, 4, 4}, {3, 2, 2, 2}, {.pad = 1}},
    {"images in parallel", {4, 8, 12, 12}, {16, 4, 3, 3}, {.pad = 1, .groups = 2}},
    // Sizes at which float32 runs in oneDNN's blocked layouts (16 channels and more, not all multiples of 16).
    {"wide", {2, 20, 9, 7}, {24, 20, 3, 3}, {.pad = 1}},
    {"wide, batch 1, strided, odd extents", {1, 17, 11, 9}, {33, 17, 3, 3}, {.stride = 2, .pad = 1}, false},
    {"wide cover_all with dilation", {3, 16, 10, 13}, {16, 16, 3, 2},
     {.stride = {2, 3}, .pad = {1, 0}, .dilation = {2, 1}, .cover_all = true}},
    {"wide groups", {2, 32, 7, 7}, {48, 16, 3, 3}, {.pad = 1, .groups = 2}, false},
    {"wide depthwise", {2, 32, 8, 8}, {32, 1, 3, 3}, {.stride = 2, .pad = 1, .groups = 32}},
    {"wide 1x1", {2, 32, 5, 5}, {16, 32, 1, 1}, {}},
    {"wide 1x1 strided", {2, 16, 7, 7}, {32, 16, 1, 1}, {.stride = 2}, false},
    {"7x7 stem", {2, 3, 15, 13}, {16, 3, 7, 7}, {.stride = 2, .pad = 3}},
};

Variable conv(const Variable& x, const Variable& w, const Variable& b, const Convolution2DParams& p) {
  return b.defined() ? F::convolution_2d(x, w, b, p) : F::convolution_2d(x, w, p);
}

}  // namespace

TEST_CASE("convolution_2d matches a direct convolution") {
  for (const Case& c : kCases) {
    INFO("case ", c.name);
    const Array x = random(c.x, 1), w = random(c.w, 2);
    const Array b = c.bias ? random(Shape{c.w[0]}, 3) : Array();
    const Variable y = conv(Variable(x), Variable(w), c.bias ? Variable(b) : Variable(), c.params);
    expect_close(y.data(), naive_convolution(x, w, b, c.params), 1e-12, 1e-12);
  }
}

TEST_CASE("cover_all adds the last window that the stride would skip") {
  const Variable x(random({1, 1, 6, 6}, 4)), w(random({1, 1, 3, 3}, 5));
  CHECK(F::convolution_2d(x, w, {.stride = 2}).shape() == Shape{1, 1, 2, 2});
  CHECK(F::convolution_2d(x, w, {.stride = 2, .cover_all = true}).shape() == Shape{1, 1, 3, 3});
}

TEST_CASE("deconvolution_2d matches a direct transposed convolution") {
  for (const Case& c : kCases) {
    INFO("case ", c.name);
    // Deconvolution maps the convolution's output space back to its input space, with the same W.
    const Array y = naive_convolution(random(c.x, 1), random(c.w, 2), Array(), c.params);
    const Array gy = random(y.shape(), 6), w = random(c.w, 7), b = c.bias ? random(Shape{c.x[1]}, 8) : Array();
    const Convolution2DParams p = c.params;
    const F::Int2 outsize{c.x[2], c.x[3]};
    const Variable out = c.bias ? F::deconvolution_2d(Variable(gy), Variable(w), Variable(b), p, outsize)
                                : F::deconvolution_2d(Variable(gy), Variable(w), p, outsize);
    expect_close(out.data(), naive_deconvolution(gy, w, b, p, c.x[2], c.x[3]), 1e-12, 1e-12);
  }
}

TEST_CASE("deconvolution_2d without outsize gives Chainer's output size") {
  const Variable x(random({2, 3, 4, 5}, 9)), w(random({3, 2, 3, 3}, 10));
  CHECK(F::deconvolution_2d(x, w).shape() == Shape{2, 2, 6, 7});
  const Variable strided = F::deconvolution_2d(x, w, {.stride = 2, .pad = 1});
  CHECK(strided.shape() == Shape{2, 2, 7, 9});
  expect_close(strided.data(), naive_deconvolution(x.data(), w.data(), Array(), {.stride = 2, .pad = 1}, 7, 9));
  CHECK(F::deconvolution_2d(x, w, {.stride = 2, .cover_all = true}).shape() == Shape{2, 2, 8, 10});
}

TEST_CASE("convolution_2d gradients and double gradients") {
  const Array x = random({2, 4, 5, 5}, 11), w = random({4, 2, 3, 3}, 12), b = random({4}, 13);
  auto with_params = [](const Convolution2DParams& p) {
    return [p](const std::vector<Variable>& in) {
      return std::vector<Variable>{in.size() > 2 ? F::convolution_2d(in[0], in[1], in[2], p)
                                                 : F::convolution_2d(in[0], in[1], p)};
    };
  };
  check_gradients(with_params({.pad = 1, .groups = 2}), {x, w, b});
  check_gradients(with_params({.stride = 2, .groups = 2, .cover_all = true}), {x, w});
  check_gradients(with_params({.stride = {1, 2}, .pad = {2, 1}, .dilation = 2}), {x, random({3, 4, 2, 2}, 14)});
}

TEST_CASE("deconvolution_2d gradients and double gradients") {
  const Array x = random({2, 4, 3, 3}, 15), w = random({4, 3, 3, 3}, 16), b = random({6}, 17);
  check_gradients(
      [](const std::vector<Variable>& in) {
        return std::vector<Variable>{F::deconvolution_2d(in[0], in[1], in[2], {.stride = 2, .pad = 1, .groups = 2})};
      },
      {x, w, b});
  check_gradients(
      [](const std::vector<Variable>& in) {
        return std::vector<Variable>{F::deconvolution_2d(in[0], in[1], {.stride = 2, .groups = 2}, F::Int2{8, 8})};
      },
      {x, w});
}

TEST_CASE("convolution_2d_grad_weight is the filter gradient and differentiable") {
  const Convolution2DParams p{.stride = 2, .pad = 1, .groups = 2};
  const Array x = random({2, 4, 5, 5}, 18), w = random({4, 2, 3, 3}, 19);
  const Variable xv(x), wv(w);
  Variable y = F::convolution_2d(xv, wv, p);
  const Array gy = random(y.shape(), 20);
  y.set_grad(gy);
  y.backward();
  expect_close(F::convolution_2d_grad_weight(Variable(x), Variable(gy), w.shape(), p).data(), wv.grad(), 1e-12, 1e-12);
  check_gradients(
      [&](const std::vector<Variable>& in) {
        return std::vector<Variable>{F::convolution_2d_grad_weight(in[0], in[1], w.shape(), p)};
      },
      {x, gy});
}

TEST_CASE("the data and filter gradients are the convolution's adjoints, also with images in parallel") {
  // <conv(x, W), gy> = <x, deconv(gy, W)> = <W, grad_weight(x, gy)> for any x, W, gy.
  for (const Shape& x_shape : {Shape{3, 4, 6, 5}, Shape{6, 8, 16, 16}}) {
    const Convolution2DParams p{.stride = {2, 1}, .pad = 1, .dilation = {1, 2}, .groups = 2, .cover_all = true};
    const Variable x(random(x_shape, 26)), w(random({8, x_shape[1] / 2, 3, 3}, 27));
    const Variable y = F::convolution_2d(x, w, p);
    const Variable gy(random(y.shape(), 28));
    auto dot = [](const Variable& a, const Variable& b) {
      return ops::sum(ops::mul(a.data(), b.data())).item<double>();
    };
    const doctest::Approx reference = doctest::Approx(dot(y, gy)).epsilon(1e-12);
    CHECK(dot(x, F::deconvolution_2d(gy, w, p, F::Int2{x_shape[2], x_shape[3]})) == reference);
    CHECK(dot(w, F::convolution_2d_grad_weight(x, gy, w.shape(), p)) == reference);
  }
}

TEST_CASE("convolution forward in float32, float16 and bfloat16") {
  const Array x = random({2, 4, 5, 5}, 21), w = random({4, 2, 3, 3}, 22), b = random({4}, 23);
  const Convolution2DParams p{.stride = 2, .pad = 1, .groups = 2};
  check_forward_dtypes(
      [&](const std::vector<Variable>& in) {
        return std::vector<Variable>{F::convolution_2d(in[0], in[1], in[2], p)};
      },
      {x, w, b});
  check_forward_dtypes(
      [&](const std::vector<Variable>& in) {
        return std::vector<Variable>{F::deconvolution_2d(in[0], in[1], in[2], p)};
      },
      {random({2, 4, 3, 3}, 24), w, b});
  check_forward_dtypes(
      [&](const std::vector<Variable>& in) {
        return std::vector<Variable>{F::convolution_2d_grad_weight(in[0], in[1], w.shape(), p)};
      },
      {x, random({2, 4, 3, 3}, 25)});
}

TEST_CASE("a one-channel image marked channels-last convolves as its row-major bytes do, filter gradient row-major") {
  // Grey images are the same bytes in both orders, told apart by the channel axis's stride
  // (core/memory_order.h): the marked one runs the channels-last passes where a device has them.
  for (const Dtype dtype : {Dtype::float32, Dtype::float16}) {
    INFO(dtype_name(dtype));
    const Array x = random({2, 1, 6, 5}, 40, dtype), w = random({4, 1, 3, 3}, 41, dtype);
    const Array marked = in_order(x, MemoryOrder::channels_last);
    REQUIRE(memory_order_of(marked) == MemoryOrder::channels_last);
    const Convolution2DParams p{.pad = 1};
    const Variable w_row_major(w), w_marked(w);
    Variable y = F::convolution_2d(Variable(x, false), w_row_major, p);
    Variable y_marked = F::convolution_2d(Variable(marked, false), w_marked, p);
    CHECK(memory_order_of(y_marked.data()) == MemoryOrder::channels_last);
    const double tol = dtype == Dtype::float32 ? 1e-5 : 1e-2;
    expect_close(y_marked.data(), y.data(), tol, tol);
    const Array gy = random(y.shape(), 42, dtype);
    y.set_grad(gy);
    y.backward();
    y_marked.set_grad(gy);
    y_marked.backward();
    CHECK(w_marked.grad().strides() == contiguous_strides(w.shape()));  // the contract's row-major gradient
    expect_close(w_marked.grad(), w_row_major.grad(), tol, tol);
  }
}

TEST_CASE("float32 convolutions and their data and filter gradients match float64 in every geometry") {
  // float32 runs in oneDNN and float64 by im2col and GEMM; deconvolution_2d is the data gradient with a bias.
  auto expect_float32_matches = [](const std::function<Variable(const std::vector<Variable>&)>& f,
                                   const std::vector<Array>& inputs) {
    std::vector<Variable> doubles, floats;
    for (const Array& a : inputs) {
      doubles.push_back(a.defined() ? Variable(a, false) : Variable());
      floats.push_back(a.defined() ? Variable(a.astype(Dtype::float32), false) : Variable());
    }
    const Variable y = f(floats);
    CHECK(y.dtype() == Dtype::float32);
    expect_close(y.data(), f(doubles).data(), 1e-4, 1e-4);
  };
  for (const Case& c : kCases) {
    INFO("case ", c.name);
    const Array x = random(c.x, 1), w = random(c.w, 2);
    const Array gy = random(naive_convolution(x, w, Array(), c.params).shape(), 3);
    const Convolution2DParams p = c.params;
    const F::Int2 outsize{c.x[2], c.x[3]};
    expect_float32_matches([&](const auto& in) { return conv(in[0], in[1], in[2], p); },
                           {x, w, c.bias ? random(Shape{c.w[0]}, 4) : Array()});
    expect_float32_matches(
        [&](const auto& in) {
          return in[2].defined() ? F::deconvolution_2d(in[0], in[1], in[2], p, outsize)
                                 : F::deconvolution_2d(in[0], in[1], p, outsize);
        },
        {gy, w, c.bias ? random(Shape{c.x[1]}, 5) : Array()});
    expect_float32_matches([&](const auto& in) { return F::convolution_2d_grad_weight(in[0], in[1], c.w, p); },
                           {x, gy});
  }
}

TEST_CASE("float32 convolutions running in several threads at once give the results of one thread") {
  // Every thread runs the same three cached oneDNN plans on its own images.
  const Convolution2DParams p{.stride = 2, .pad = 1};
  const Variable w(random({32, 16, 3, 3}, 30, Dtype::float32), false);
  auto passes = [&](uint64_t seed) {
    const Variable x(random({3, 16, 9, 9}, seed, Dtype::float32), false);
    const Variable y = F::convolution_2d(x, w, p);
    return std::vector<Array>{y.data(), F::deconvolution_2d(y, w, p, F::Int2{9, 9}).data(),
                              F::convolution_2d_grad_weight(x, y, w.shape(), p).data()};
  };
  constexpr int kThreads = 4;
  std::vector<std::vector<Array>> concurrent(kThreads);
  std::vector<std::thread> threads;
  const Device device = default_device();  // a DeviceScope is per thread: each worker opens its own
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const DeviceScope scope(device);
      for (int repeat = 0; repeat < 5; ++repeat) concurrent[t] = passes(40 + t);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    const std::vector<Array> alone = passes(40 + t);
    for (size_t k = 0; k < alone.size(); ++k) expect_close(concurrent[t][k], alone[k], 1e-5, 1e-5);
  }
}

TEST_CASE("convolution errors name the shapes") {
  const Variable x(Array::zeros({2, 4, 5, 5})), w(Array::zeros({3, 3, 3, 3}));
  expect_error<ShapeError>([&] { F::convolution_2d(x, w); }, {"convolution_2d", "(2, 4, 5, 5)", "(3, 3, 3, 3)"});
  expect_error<ShapeError>([&] { F::convolution_2d(x, Variable(Array::zeros({6, 1, 3, 3})), {.groups = 3}); },
                           {"convolution_2d", "groups (3)", "4 input channels", "(2, 4, 5, 5)"});
  expect_error<ShapeError>([&] { F::convolution_2d(x, Variable(Array::zeros({3, 2, 3, 3})), {.groups = 2}); },
                           {"convolution_2d", "groups (2)", "3 output channels", "(3, 2, 3, 3)"});
  expect_error<ShapeError>(
      [&] { F::convolution_2d(Variable(Array::zeros({1, 1, 2, 3})), Variable(Array::zeros({1, 1, 3, 3}))); },
      {"convolution_2d", "(1, 1, 3, 3)", "padded input (2, 3)", "(1, 1, 2, 3)"});
  expect_error<ShapeError>([&] { F::convolution_2d(x, Variable(Array::zeros({2, 4, 3, 3})), {.dilation = 3}); },
                           {"convolution_2d", "spans (7, 7)", "(5, 5)"});
  expect_error<ShapeError>(
      [&] { F::convolution_2d(x, Variable(Array::zeros({2, 4, 3, 3})), Variable(Array::zeros({3}))); },
                           {"convolution_2d", "b of shape (2,)", "(3,)"});
  expect_error<ShapeError>([&] { F::convolution_2d(Variable(Array::zeros({4, 5, 5})), w); },
                           {"convolution_2d", "4 axes", "(4, 5, 5)"});
  expect_error<DtypeError>([&] { F::convolution_2d(x, Variable(Array::zeros({2, 4, 3, 3}, Dtype::float64))); },
                           {"convolution_2d", "float32", "float64"});
  expect_error<ValueError>([&] { F::convolution_2d(x, Variable(Array::zeros({2, 4, 3, 3})), {.stride = 0}); },
                           {"convolution_2d", "stride", "(0, 0)"});
}

TEST_CASE("deconvolution and grad_weight errors name the shapes") {
  const Variable x(Array::zeros({2, 4, 3, 3})), w(Array::zeros({4, 3, 3, 3}));
  expect_error<ShapeError>([&] { F::deconvolution_2d(x, Variable(Array::zeros({3, 3, 3, 3}))); },
                           {"deconvolution_2d", "(2, 4, 3, 3)", "(3, 3, 3, 3)"});
  expect_error<ShapeError>([&] { F::deconvolution_2d(x, w, {.stride = 2}, F::Int2{4, 4}); },
                           {"deconvolution_2d", "outsize (4, 4)", "(3, 3)", "(2, 4, 3, 3)"});
  expect_error<ShapeError>([&] { F::deconvolution_2d(x, w, Variable(Array::zeros({4}))); },
                           {"deconvolution_2d", "b of shape (3,)", "(4,)"});
  expect_error<ShapeError>(
      [&] {
        F::convolution_2d_grad_weight(Variable(Array::zeros({2, 4, 5, 5})), Variable(Array::zeros({2, 3, 2, 2})),
                                      Shape{3, 4, 3, 3}, {});
      },
      {"convolution_2d_grad_weight", "gy of shape (2, 3, 3, 3)", "(2, 3, 2, 2)"});
}
