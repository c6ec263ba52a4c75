// Channels-last arrays (core/memory_order.h): detection and copies, elementwise results that keep their
// operands' order, and convolution, batch normalization and max pooling giving the same values and
// gradients for channels-last inputs as for row-major ones.

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

Array channels_last(const Array& a) { return in_order(a, MemoryOrder::channels_last); }

// x in channels-last memory through a differentiable route: the convolution with the identity 1x1
// kernel (convolutions write channels-last results).
Variable channels_last_copy(const Variable& x) {
  const int64_t c = x.shape()[1];
  std::vector<double> identity(static_cast<size_t>(c * c), 0.0);
  for (int64_t i = 0; i < c; ++i) identity[static_cast<size_t>(i * c + i)] = 1;
  return F::convolution_2d(x, Variable(Array::from_vector(identity, {c, c, 1, 1}, x.dtype()), false));
}

// The gradients of the inputs of f at `inputs` for the output gradient gy (each input wrapped fresh).
std::vector<Array> gradients(const std::function<Variable(const std::vector<Variable>&)>& f,
                             const std::vector<Array>& inputs, const Array& gy) {
  std::vector<Variable> xs;
  for (const Array& a : inputs) xs.emplace_back(a);
  Variable y = f(xs);
  y.set_grad(gy);
  y.backward();
  std::vector<Array> grads;
  for (const Variable& x : xs) grads.push_back(x.grad());
  return grads;
}

}  // namespace

TEST_CASE("channels-last strides, detection and copies") {
  const Array cl = empty_in_order({2, 3, 4, 5}, MemoryOrder::channels_last);
  CHECK(cl.strides() == Strides{60, 1, 15, 3});
  CHECK(is_channels_last(cl));
  CHECK_FALSE(cl.is_contiguous());
  CHECK(memory_order_of(cl) == MemoryOrder::channels_last);
  CHECK(has_channel_rows(cl));

  const Array x = random({2, 3, 4, 5}, 1);
  CHECK_FALSE(is_channels_last(x));
  CHECK(memory_order_of(x) == MemoryOrder::row_major);
  CHECK_FALSE(has_channel_rows(x));
  const Array copied = channels_last(x);
  CHECK(memory_order_of(copied) == MemoryOrder::channels_last);
  CHECK(copied.to_vector<double>() == x.to_vector<double>());
  CHECK(in_order(copied, MemoryOrder::row_major).is_contiguous());
  CHECK(in_order(copied, MemoryOrder::row_major).to_vector<double>() == x.to_vector<double>());
  CHECK(channels_last(copied).raw_data() == copied.raw_data());  // already in order: no copy

  // An NHWC array viewed as NCHW is channels-last; one channel or 1x1 planes are both orders.
  CHECK(memory_order_of(random({2, 4, 5, 3}, 2).transpose({0, 3, 1, 2})) == MemoryOrder::channels_last);
  CHECK(is_channels_last(random({2, 1, 4, 5}, 3)));
  CHECK(memory_order_of(random({2, 1, 4, 5}, 3)) == MemoryOrder::row_major);
  CHECK(memory_order_of(empty_in_order({2, 3, 1, 1}, MemoryOrder::channels_last)) == MemoryOrder::row_major);
  CHECK(memory_order_of(empty_in_order({2, 1, 1, 1}, MemoryOrder::channels_last)) == MemoryOrder::row_major);
  // One channel says its order by axis 1's stride: 1 in channels-last, the plane's size in row-major.
  CHECK(memory_order_of(empty_in_order({2, 1, 4, 5}, MemoryOrder::channels_last)) == MemoryOrder::channels_last);
  CHECK(memory_order_of(random({2, 4, 5, 1}, 2).transpose({0, 3, 1, 2})) == MemoryOrder::channels_last);
  // Two axes: row-major arrays have channel rows; fewer axes are never channels-last.
  CHECK(has_channel_rows(random({4, 3}, 4)));
  CHECK_FALSE(has_channel_rows(random({4, 3}, 4).transpose()));
  CHECK_FALSE(is_channels_last(random({4}, 5)));
  CHECK(channels_last_strides({4, 3}) == Strides{3, 1});
  // Five axes: the channels innermost, then the last axis, ..., the batch outermost.
  CHECK(channels_last_strides({2, 3, 4, 5, 6}) == Strides{360, 1, 90, 18, 3});
}

TEST_CASE("one channel changes its memory order without a copy and keeps it through elementwise maps") {
  const Array x = random({2, 1, 4, 5}, 30);
  const Array marked = channels_last(x);
  CHECK(marked.storage() == x.storage());
  CHECK(marked.strides() == Strides{20, 1, 5, 1});
  CHECK(memory_order_of(marked) == MemoryOrder::channels_last);
  CHECK(has_channel_rows(marked));
  CHECK(channels_last(marked).strides() == marked.strides());
  const Array back = in_order(marked, MemoryOrder::row_major);
  CHECK(back.storage() == x.storage());
  CHECK(back.strides() == x.strides());
  CHECK(memory_order_of(back) == MemoryOrder::row_major);
  CHECK(memory_order_of(ops::relu(marked)) == MemoryOrder::channels_last);
  CHECK(memory_order_of(ops::add(marked, x)) == MemoryOrder::channels_last);
  CHECK(memory_order_of(ops::add(x, marked)) == MemoryOrder::row_major);
  CHECK(ops::relu(marked).to_vector<double>() == ops::relu(x).to_vector<double>());
  // Batch normalization sums a marked channel as the row-major planes it is: the same bits.
  const Variable gamma(random({1}, 32, Dtype::float64, 0.5, 1.5)), beta(random({1}, 33));
  const Array normalized = F::batch_normalization(Variable(x), gamma, beta, 1e-5).y.data();
  CHECK(F::batch_normalization(Variable(marked), gamma, beta, 1e-5).y.data().to_vector<double>() ==
        normalized.to_vector<double>());
}

TEST_CASE("elementwise results keep the memory order of their first operand of the result's shape") {
  const Array a = random({2, 3, 4, 5}, 6), b = random({2, 3, 4, 5}, 7);
  const Array a_cl = channels_last(a), b_cl = channels_last(b);
  const auto same = [](const Array& result, const Array& expected, MemoryOrder order) {
    CHECK(memory_order_of(result) == order);
    CHECK(result.to_vector<double>() == expected.to_vector<double>());
  };
  same(ops::add(a_cl, b_cl), ops::add(a, b), MemoryOrder::channels_last);
  same(ops::add_relu(a_cl, b_cl), ops::add_relu(a, b), MemoryOrder::channels_last);
  same(ops::relu(a_cl), ops::relu(a), MemoryOrder::channels_last);
  same(ops::exp(a_cl), ops::exp(a), MemoryOrder::channels_last);
  same(ops::mul(a_cl, b), ops::mul(a, b), MemoryOrder::channels_last);
  same(ops::mul(a, b_cl), ops::mul(a, b), MemoryOrder::row_major);
  same(ops::greater(a_cl, b_cl), ops::greater(a, b), MemoryOrder::channels_last);
  // A broadcast operand does not decide: the other one does.
  const Array per_channel = random({2, 3, 1, 1}, 8);
  same(ops::relu_grad(per_channel, a_cl), ops::relu_grad(per_channel, a), MemoryOrder::channels_last);
  const Array broadcast = per_channel.broadcast_to(a.shape());  // a view of the result's shape, not dense
  same(ops::relu_grad(broadcast, a_cl), ops::relu_grad(broadcast, a), MemoryOrder::channels_last);
  same(ops::where(ops::greater(a_cl, b), a_cl, b), ops::where(ops::greater(a, b), a, b), MemoryOrder::channels_last);
  // A strided view (not dense) gives a row-major result.
  const Array strided = a_cl.get_item({Slice{}, Slice{}, Slice{0, 4, 2}});
  same(ops::neg(strided), ops::neg(a.get_item({Slice{}, Slice{}, Slice{0, 4, 2}})), MemoryOrder::row_major);
  // In place into a channels-last array from a row-major one.
  const Array sum = a_cl.copy();
  ops::add_to(a_cl, b);
  CHECK(a_cl.to_vector<double>() == ops::add(sum, b).to_vector<double>());
}

TEST_CASE("convolutions of channels-last inputs equal those of row-major ones and write channels-last") {
  struct Case {
    const char* name;
    Shape x, w;
    F::Convolution2DParams params;
  };
  const std::vector<Case> cases = {
      {"3x3", {2, 16, 6, 6}, {8, 16, 3, 3}, {.pad = 1}},
      {"3x3 stride 2", {2, 8, 7, 7}, {16, 8, 3, 3}, {.stride = 2, .pad = 1}},
      {"1x1", {2, 16, 5, 5}, {32, 16, 1, 1}, {}},
      {"1x1 stride 2", {2, 16, 6, 6}, {8, 16, 1, 1}, {.stride = 2}},
      {"1x1 stride 2, a last window in the padding", {2, 16, 6, 6}, {8, 16, 1, 1}, {.stride = 2, .cover_all = true}},
      {"1x1 padded", {2, 16, 4, 4}, {8, 16, 1, 1}, {.pad = 1}},
      {"grouped", {2, 8, 5, 5}, {8, 4, 3, 3}, {.pad = 1, .groups = 2}},
      {"few channels", {2, 3, 8, 8}, {16, 3, 3, 3}, {.pad = 1}},
  };
  for (Dtype dtype : {Dtype::float32, Dtype::float64}) {
    for (const Case& c : cases) {
      INFO("case ", c.name, ", dtype ", dtype_name(dtype));
      const Array x = random(c.x, 9, dtype), w = random(c.w, 10, dtype);
      const auto conv = [&c](const std::vector<Variable>& in) { return F::convolution_2d(in[0], in[1], c.params); };
      const Variable y = conv({Variable(x), Variable(w)});
      const Variable y_cl = conv({Variable(channels_last(x)), Variable(w)});
      CHECK(memory_order_of(y.data()) == MemoryOrder::channels_last);
      CHECK(memory_order_of(y_cl.data()) == MemoryOrder::channels_last);
      const double tol = dtype == Dtype::float32 ? 1e-5 : 1e-12;
      expect_close(y_cl.data(), y.data(), tol, tol);
      const Array gy = random(y.shape(), 11, dtype);
      const std::vector<Array> expected = gradients(conv, {x, w}, gy);
      for (const auto& [input, output_gradient] :
           {std::pair{channels_last(x), gy}, std::pair{x, channels_last(gy)}, std::pair{channels_last(x),
                                                                                          channels_last(gy)}}) {
        const std::vector<Array> actual = gradients(conv, {input, w}, output_gradient);
        CHECK(memory_order_of(actual[0]) == MemoryOrder::channels_last);
        expect_close(actual[0], expected[0], tol, tol);
        expect_close(actual[1], expected[1], tol, tol);
      }
    }
  }
}

TEST_CASE("deconvolution with a bias adds it to every channel of its channels-last result") {
  const Array x = random({2, 4, 5, 5}, 12), w = random({4, 6, 3, 3}, 13), b = random({6}, 14);
  const F::Convolution2DParams p{.stride = 2, .pad = 1};
  const Variable reference = F::deconvolution_2d(Variable(x), Variable(w), Variable(b), p);
  const Variable single = F::deconvolution_2d(Variable(channels_last(x.astype(Dtype::float32))),
                                              Variable(w.astype(Dtype::float32)), Variable(b.astype(Dtype::float32)),
                                              p);
  CHECK(memory_order_of(single.data()) == MemoryOrder::channels_last);
  expect_close(single.data(), reference.data(), 1e-5, 1e-5);
}

TEST_CASE("batch normalization of channels-last inputs equals that of row-major ones, values and gradients") {
  for (Dtype dtype : {Dtype::float32, Dtype::float64}) {
    for (F::Activation activation : {F::Activation::none, F::Activation::relu}) {
      INFO("dtype ", dtype_name(dtype), ", relu ", activation == F::Activation::relu);
      const Array x = random({3, 5, 4, 6}, 15, dtype, -2, 3), gamma = random({5}, 16, dtype, 0.5, 1.5);
      const Array beta = random({5}, 17, dtype);
      const auto bn = [activation](const std::vector<Variable>& in) {
        return F::batch_normalization(in[0], in[1], in[2], 1e-5, activation).y;
      };
      const Variable y = bn({Variable(x), Variable(gamma), Variable(beta)});
      const Variable y_cl = bn({Variable(channels_last(x)), Variable(gamma), Variable(beta)});
      CHECK(memory_order_of(y_cl.data()) == MemoryOrder::channels_last);
      const double tol = dtype == Dtype::float32 ? 1e-5 : 1e-12;
      expect_close(y_cl.data(), y.data(), tol, tol);
      const Array gy = random(x.shape(), 18, dtype);
      const std::vector<Array> expected = gradients(bn, {x, gamma, beta}, gy);
      const std::vector<Array> actual = gradients(bn, {channels_last(x), gamma, beta}, channels_last(gy));
      CHECK(memory_order_of(actual[0]) == MemoryOrder::channels_last);
      for (size_t i = 0; i < 3; ++i) expect_close(actual[i], expected[i], 10 * tol, 10 * tol);
      // Mixed orders: a row-major gradient for a channels-last input is computed channels-last.
      const Array mixed = gradients(bn, {channels_last(x), gamma, beta}, gy)[0];
      CHECK(memory_order_of(mixed) == MemoryOrder::channels_last);
      expect_close(mixed, expected[0], 10 * tol, 10 * tol);
    }
  }
}

TEST_CASE("batch normalization and residual joins over channels-last convolutions: finite differences") {
  // conv -> BN with ReLU -> conv -> BN, joined with the input's 1x1 projection by add_relu: every
  // activation of the block is channels-last, forward and backward, twice differentiated.
  const Array x = random({2, 3, 4, 4}, 19), w1 = random({4, 3, 3, 3}, 20), w2 = random({4, 4, 3, 3}, 21);
  const Array projection = random({4, 3, 1, 1}, 22), gamma = random({4}, 23, Dtype::float64, 0.5, 1.5);
  const Array beta = random({4}, 24);
  const auto block = [](const std::vector<Variable>& in) {
    const F::Convolution2DParams pad{.pad = 1};
    const Variable h = F::batch_normalization(F::convolution_2d(in[0], in[1], pad), in[4], in[5], 1e-5,
                                              F::Activation::relu).y;
    const Variable branch = F::batch_normalization(F::convolution_2d(h, in[2], pad), in[4], in[5], 1e-5).y;
    return std::vector<Variable>{F::add_relu(branch, F::convolution_2d(in[0], in[3]))};
  };
  check_gradients(block, {x, w1, w2, projection, gamma, beta}, true, {1e-3, 1e-4, 1e-3});
}

TEST_CASE("a channels-last filter convolves, and is convolved with, as its row-major copy does") {
  // oneDNN is given the filter as OIHW: a channels-last one (3x3 and larger) once went to it unconverted.
  const F::Convolution2DParams p{.stride = 2, .pad = 1};
  for (const Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::float64}) {
    INFO(dtype_name(dtype));
    const Array x = random({2, 6, 9, 8}, 27, dtype), w = random({5, 6, 3, 3}, 28, dtype);
    const Array w_cl = channels_last(w);
    REQUIRE(memory_order_of(w_cl) == MemoryOrder::channels_last);
    const auto conv = [&p](const std::vector<Variable>& in) { return F::convolution_2d(in[0], in[1], p); };
    const Array y = conv({Variable(x), Variable(w)}).data();
    CHECK(conv({Variable(x), Variable(w_cl)}).data().to_vector<double>() == y.to_vector<double>());
    const double tol = dtype == Dtype::float64 ? 1e-12 : dtype == Dtype::float32 ? 1e-5 : 4e-3;
    expect_close(conv({Variable(channels_last(x)), Variable(w_cl)}).data(), y, tol, tol);
    const Array gy = random(y.shape(), 29, dtype);
    const std::vector<Array> expected = gradients(conv, {x, w}, gy);
    const std::vector<Array> actual = gradients(conv, {x, w_cl}, gy);
    CHECK(actual[0].to_vector<double>() == expected[0].to_vector<double>());
    CHECK(actual[1].to_vector<double>() == expected[1].to_vector<double>());
  }
}

TEST_CASE("max pooling of channels-last inputs: the values, winners and gradients of row-major ones") {
  const Array x = random({2, 6, 7, 7}, 25, Dtype::float32);
  const auto pool = [](const std::vector<Variable>& in) { return F::max_pooling_2d(in[0], 3, 2, 1, false); };
  const Variable y = pool({Variable(x)});
  const Variable y_cl = pool({Variable(channels_last(x))});
  CHECK(memory_order_of(y_cl.data()) == MemoryOrder::channels_last);
  CHECK(y_cl.data().to_vector<float>() == y.data().to_vector<float>());
  const Array gy = random(y.shape(), 26, Dtype::float32);
  const Array expected = gradients(pool, {x}, gy)[0];
  const Array actual = gradients(pool, {channels_last(x)}, gy)[0];
  CHECK(memory_order_of(actual) == MemoryOrder::channels_last);
  CHECK(actual.to_vector<float>() == expected.to_vector<float>());
}

TEST_CASE("max pooling of channels-last inputs: finite differences, to second order") {
  // Values at least 0.1 apart, so that the finite differences keep every window's winner.
  std::vector<double> values;
  for (int64_t i = 0; i < 2 * 3 * 5 * 5; ++i) values.push_back(static_cast<double>((i * 37 + 11) % 150) * 0.1);
  const Array x = Array::from_vector(values, {2, 3, 5, 5});
  check_gradients([](const std::vector<Variable>& in) {
    return std::vector<Variable>{F::max_pooling_2d(channels_last_copy(in[0]), 3, 2, 1, false)};
  }, {x});
}
