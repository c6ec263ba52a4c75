#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

// A float64 variable holding 0, 1, 2, ... in the given shape.
Variable iota(const Shape& shape) {
  return Variable(Array::arange(0, static_cast<double>(shape.numel()), 1, Dtype::float64).reshape(shape));
}

// Gradient, double-backward and dtype checks of a one-input function.
void check_unary(const std::function<Variable(const Variable&)>& f, const Array& x) {
  check_gradients(unary(f), {x});
  check_forward_dtypes(unary(f), {x});
}

// Gradient, double-backward and dtype checks of a function of several inputs and outputs.
void check_multi(const gradient_check::Function& f, const std::vector<Array>& xs) {
  check_gradients(f, xs);
  check_forward_dtypes(f, xs);
}

}  // namespace

TEST_CASE("reshape keeps the row-major order and infers -1") {
  const Variable x = iota({2, 3});
  const Variable y = F::reshape(x, {3, 2});
  CHECK(y.shape() == Shape{3, 2});
  expect_values(y.data(), {0, 1, 2, 3, 4, 5});
  CHECK(F::reshape(x, {-1}).shape() == Shape{6});
  CHECK(F::reshape(x, {1, -1, 2}).shape() == Shape{1, 3, 2});
  CHECK(F::reshape(x, {2, 3}).is(x));
  check_unary([](const Variable& v) { return F::reshape(v, {4, -1}); }, random({2, 3, 2}, 1));
}

TEST_CASE("reshape of a non-contiguous variable") {
  const Variable y = F::reshape(F::transpose(iota({2, 3})), {6});
  expect_values(y.data(), {0, 3, 1, 4, 2, 5});
  check_unary([](const Variable& v) { return F::reshape(F::transpose(v), {-1}); }, random({2, 3}, 2));
}

TEST_CASE("reshape rejects sizes that differ") {
  const Variable x = iota({2, 3});
  expect_error<ShapeError>([&] { F::reshape(x, {4}); }, {"reshape", "(2, 3)", "(4,)"});
  expect_error<ShapeError>([&] { F::reshape(x, {-1, -1}); }, {"reshape", "-1"});
  expect_error<ShapeError>([&] { F::reshape(x, {4, -1}); }, {"reshape", "(2, 3)", "(4, -1)"});
}

TEST_CASE("flatten gives a 1-D variable") {
  const Variable y = F::flatten(iota({2, 1, 3}));
  CHECK(y.shape() == Shape{6});
  expect_values(y.data(), {0, 1, 2, 3, 4, 5});
  CHECK(F::flatten(Variable(Array::scalar(2.0, Dtype::float64))).shape() == Shape{1});
  check_unary(F::flatten, random({2, 3, 2}, 3));
}

TEST_CASE("squeeze drops unit axes") {
  const Variable x = iota({1, 3, 1});
  CHECK(F::squeeze(x).shape() == Shape{3});
  CHECK(F::squeeze(x, {0}).shape() == Shape{3, 1});
  CHECK(F::squeeze(x, {-1}).shape() == Shape{1, 3});
  expect_values(F::squeeze(x).data(), {0, 1, 2});
  check_unary([](const Variable& v) { return F::squeeze(v); }, random({1, 3, 1, 2}, 4));
  check_unary([](const Variable& v) { return F::squeeze(v, {2}); }, random({1, 3, 1, 2}, 5));
  expect_error<ShapeError>([&] { F::squeeze(x, {1}); }, {"squeeze", "axis 1", "extent 1", "got 3", "(1, 3, 1)"});
  expect_error<IndexError>([&] { F::squeeze(x, {3}); }, {"squeeze", "got 3"});
}

TEST_CASE("expand_dims inserts a unit axis") {
  const Variable x = iota({2, 3});
  CHECK(F::expand_dims(x, 0).shape() == Shape{1, 2, 3});
  CHECK(F::expand_dims(x, 1).shape() == Shape{2, 1, 3});
  CHECK(F::expand_dims(x, -1).shape() == Shape{2, 3, 1});
  expect_values(F::expand_dims(x, 1).data(), {0, 1, 2, 3, 4, 5});
  check_unary([](const Variable& v) { return F::expand_dims(v, 1); }, random({2, 3}, 6));
  expect_error<IndexError>([&] { F::expand_dims(x, 3); }, {"expand_dims", "[-3, 3)", "got 3"});
}

TEST_CASE("transpose permutes axes") {
  const Variable x = iota({2, 3});
  const Variable t = F::transpose(x);
  CHECK(t.shape() == Shape{3, 2});
  expect_values(t.data(), {0, 3, 1, 4, 2, 5});
  const Variable y = F::transpose(iota({2, 3, 4}), {1, -1, 0});
  CHECK(y.shape() == Shape{3, 4, 2});
  // y[i, j, k] = x[k, i, j] = 12k + 4i + j
  expect_values(F::get_item(y, {int64_t{2}, int64_t{1}}).data(), {9, 21});
  check_unary([](const Variable& v) { return F::transpose(v, {1, 2, 0}); }, random({2, 3, 4}, 7));
  check_unary([](const Variable& v) { return F::transpose(v); }, random({2, 3}, 8));
}

TEST_CASE("transpose rejects bad permutations") {
  const Variable x = iota({2, 3});
  expect_error<IndexError>([&] { F::transpose(x, {0, 1, 2}); }, {"transpose", "expected 2 axes", "(2, 3)", "got 3"});
  expect_error<IndexError>([&] { F::transpose(x, {0, -2}); }, {"transpose", "repeated"});
  expect_error<IndexError>([&] { F::transpose(x, {0, 2}); }, {"transpose", "[-2, 2)", "got 2"});
}

TEST_CASE("concat joins along axis 1 by default") {
  const Variable a = iota({2, 1}), b = iota({2, 2});
  const Variable y = F::concat({a, b});
  CHECK(y.shape() == Shape{2, 3});
  expect_values(y.data(), {0, 0, 1, 1, 2, 3});
  const Variable z = F::concat({iota({1, 3}), iota({2, 3})}, 0);
  CHECK(z.shape() == Shape{3, 3});
  expect_values(z.data(), {0, 1, 2, 0, 1, 2, 3, 4, 5});
  expect_values(F::concat({a, b}, -1).data(), {0, 0, 1, 1, 2, 3});
}

TEST_CASE("concat gradients, double backward and dtypes") {
  const auto join = [](int64_t axis) {
    return [axis](const std::vector<Variable>& xs) { return std::vector<Variable>{F::concat(xs, axis)}; };
  };
  check_multi(join(1), {random({2, 1, 2}, 9), random({2, 3, 2}, 10), random({2, 2, 2}, 11)});
  check_multi(join(0), {random({1, 3}, 12), random({2, 3}, 13)});
}

TEST_CASE("concat rejects mismatched inputs") {
  const Variable a = iota({2, 1}), b = iota({3, 2});
  expect_error<ValueError>([&] { F::concat({}); }, {"concat", "at least one"});
  expect_error<ShapeError>([&] { F::concat({a, b}); }, {"concat", "(2, 1)", "(3, 2)", "axis 1"});
  expect_error<ShapeError>([&] { F::concat({a, iota({2, 1, 1})}); }, {"concat", "(2, 1)", "(2, 1, 1)"});
  const Variable c(Array::zeros({2, 1}, Dtype::float32));
  expect_error<DtypeError>([&] { F::concat({a, c}); }, {"concat", "float64", "float32"});
  expect_error<IndexError>([&] { F::concat({a, a}, 2); }, {"concat", "got 2"});
}

TEST_CASE("stack joins along a new axis") {
  const Variable a = iota({2}), b = iota({2}) + 2.0;
  const Variable rows = F::stack({a, b});
  CHECK(rows.shape() == Shape{2, 2});
  expect_values(rows.data(), {0, 1, 2, 3});
  const Variable columns = F::stack({a, b}, -1);
  CHECK(columns.shape() == Shape{2, 2});
  expect_values(columns.data(), {0, 2, 1, 3});
  const auto join = [](int64_t axis) {
    return [axis](const std::vector<Variable>& xs) { return std::vector<Variable>{F::stack(xs, axis)}; };
  };
  check_multi(join(1), {random({2, 3}, 14), random({2, 3}, 15), random({2, 3}, 16)});
  check_multi(join(0), {random({3}, 17), random({3}, 18)});
}

TEST_CASE("stack rejects mismatched shapes and axes") {
  const Variable a = iota({2}), b = iota({3});
  expect_error<ValueError>([&] { F::stack({}); }, {"stack", "at least one"});
  expect_error<ShapeError>([&] { F::stack({a, b}); }, {"stack", "(2,)", "(3,)"});
  expect_error<IndexError>([&] { F::stack({a, a}, 2); }, {"stack", "[-2, 2)", "got 2"});
}

TEST_CASE("split_axis by sections and by indices") {
  const std::vector<Variable> thirds = F::split_axis(iota({6}), 3, 0);
  REQUIRE(thirds.size() == 3);
  expect_values(thirds[0].data(), {0, 1});
  expect_values(thirds[1].data(), {2, 3});
  expect_values(thirds[2].data(), {4, 5});
  const std::vector<Variable> parts = F::split_axis(iota({2, 5}), {1, 3}, -1);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].shape() == Shape{2, 1});
  CHECK(parts[1].shape() == Shape{2, 2});
  CHECK(parts[2].shape() == Shape{2, 2});
  expect_values(parts[0].data(), {0, 5});
  expect_values(parts[1].data(), {1, 2, 6, 7});
  expect_values(parts[2].data(), {3, 4, 8, 9});
  const std::vector<Variable> with_empty = F::split_axis(iota({3}), std::vector<int64_t>{0}, 0);
  CHECK(with_empty[0].shape() == Shape{0});
  CHECK(with_empty[1].shape() == Shape{3});
}

TEST_CASE("split_axis gradients, double backward and dtypes") {
  check_multi([](const std::vector<Variable>& x) { return F::split_axis(x[0], 2, 1); }, {random({2, 4}, 19)});
  check_multi([](const std::vector<Variable>& x) { return F::split_axis(x[0], {1, 1, 3}, 0); },
              {random({4, 2}, 20)});
}

TEST_CASE("split_axis backward fills zeros for parts without a gradient") {
  check_multi([](const std::vector<Variable>& x) { return std::vector<Variable>{F::split_axis(x[0], 3, 0)[1]}; },
              {random({6, 2}, 21)});
  const Variable x = iota({4});
  Variable last = F::split_axis(x, 2, 0)[1];
  last.set_grad(Array::from_vector<double>({5, 7}, {2}));
  last.backward();
  expect_values(x.grad(), {0, 0, 5, 7});
}

TEST_CASE("split_axis rejects bad sections and indices") {
  const Variable x = iota({2, 5});
  expect_error<ShapeError>([&] { F::split_axis(x, 2, 1); }, {"split_axis", "divides extent 5", "(2, 5)", "got 2"});
  expect_error<ShapeError>([&] { F::split_axis(x, 0, 1); }, {"split_axis", "got 0"});
  expect_error<IndexError>([&] { F::split_axis(x, {3, 1}, 1); }, {"split_axis", "non-decreasing", "got 1 after 3"});
  expect_error<IndexError>([&] { F::split_axis(x, {1, 6}, 1); }, {"split_axis", "[0, 5]", "got 6"});
  expect_error<IndexError>([&] { F::split_axis(x, 2, 2); }, {"split_axis", "got 2"});
}

TEST_CASE("get_item selects by integers, slices, new axes and ellipsis") {
  const Variable x = iota({2, 3, 4});
  const Variable a = F::get_item(x, {int64_t{1}, Slice{{}, {}, 2}, int64_t{-1}});
  CHECK(a.shape() == Shape{2});
  expect_values(a.data(), {15, 23});
  const Variable b = F::get_item(x, {Ellipsis{}, int64_t{1}});
  CHECK(b.shape() == Shape{2, 3});
  expect_values(b.data(), {1, 5, 9, 13, 17, 21});
  const Variable c = F::get_item(x, {int64_t{0}, NewAxis{}, Slice{1, 3}, Slice{{}, {}, -2}});
  CHECK(c.shape() == Shape{1, 2, 2});
  expect_values(c.data(), {7, 5, 11, 9});
}

TEST_CASE("get_item gradients, double backward and dtypes") {
  const std::vector<std::vector<Index>> indexes = {
      {int64_t{1}, Slice{{}, {}, 2}, int64_t{-1}},
      {Ellipsis{}, int64_t{1}},
      {int64_t{0}, NewAxis{}, Slice{1, 3}, Slice{{}, {}, -2}},
      {Slice{1, {}}, Slice{2, 0, -1}},
  };
  for (const std::vector<Index>& index : indexes) {
    check_unary([index](const Variable& v) { return F::get_item(v, index); }, random({2, 3, 4}, 22));
  }
}

TEST_CASE("get_item backward scatters into zeros") {
  const Variable x = iota({2, 3});
  Variable y = F::get_item(x, {Slice{}, Slice{{}, {}, 2}});
  y.set_grad(Array::from_vector<double>({1, 2, 3, 4}, {2, 2}));
  y.backward();
  expect_values(x.grad(), {1, 0, 2, 3, 0, 4});
}

TEST_CASE("get_item rejects out-of-range indices") {
  const Variable x = iota({2, 3});
  expect_error<IndexError>([&] { F::get_item(x, {int64_t{2}}); }, {"get_item", "index 2", "extent 2"});
  expect_error<IndexError>([&] { F::get_item(x, {int64_t{0}, int64_t{0}, int64_t{0}}); },
                           {"get_item", "too many", "(2, 3)"});
}

TEST_CASE("cast converts values to the requested dtype") {
  const Variable x(Array::from_vector<double>({1.5, -2.25, 0.1}, {3}));
  CHECK(F::cast(x, Dtype::float64).is(x));
  const Variable ints = F::cast(x, Dtype::int32);
  CHECK(ints.dtype() == Dtype::int32);
  CHECK(ints.data().to_vector<int32_t>() == std::vector<int32_t>{1, -2, 0});
  expect_values(F::cast(x, Dtype::float16).data(), {1.5, -2.25, 0.0999755859375}, 0);
  expect_values(F::cast(x, Dtype::bfloat16).data(), {1.5, -2.25, 0.10009765625}, 0);
  for (Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
    INFO(dtype_name(dtype));
    const Array r = random({3, 4}, 23);
    const Variable y = F::cast(Variable(r.astype(dtype)), Dtype::float64);
    CHECK(y.dtype() == Dtype::float64);
    expect_close(y.data(), r, forward_tolerance(dtype), forward_tolerance(dtype));
    expect_close(F::cast(Variable(r), dtype).data().astype(Dtype::float64), r, forward_tolerance(dtype),
                 forward_tolerance(dtype));
  }
}

TEST_CASE("cast backward casts the gradient back") {
  const Variable x(Array::from_vector<float>({1, 2}, {2}));
  Variable y = F::cast(x, Dtype::float64);
  y.set_grad(Array::from_vector<double>({0.5, -3}, {2}));
  y.backward();
  CHECK(x.grad().dtype() == Dtype::float32);
  expect_values(x.grad(), {0.5, -3});
  const auto round_trip = [](const Variable& v) { return F::cast(F::cast(v, Dtype::float32), Dtype::float64); };
  check_gradients(unary(round_trip), {random({2, 3}, 24)}, true, {.eps = 1e-2, .atol = 1e-4, .rtol = 1e-3});
  check_forward_dtypes(unary([](const Variable& v) { return F::cast(F::cast(v, Dtype::float64), v.dtype()); }),
                       {random({2, 3}, 25)});
}

TEST_CASE("broadcast_to repeats along new and unit axes") {
  const Variable row(Array::from_vector<double>({1, 2, 3}, {3}));
  const Variable y = F::broadcast_to(row, {2, 3});
  CHECK(y.shape() == Shape{2, 3});
  expect_values(y.data(), {1, 2, 3, 1, 2, 3});
  const Variable column(Array::from_vector<double>({1, 2}, {2, 1}));
  expect_values(F::broadcast_to(column, {2, 3}).data(), {1, 1, 1, 2, 2, 2});
  CHECK(F::broadcast_to(row, {3}).is(row));
  check_unary([](const Variable& v) { return F::broadcast_to(v, {2, 3, 4}); }, random({3, 1}, 26));
  expect_error<ShapeError>([&] { F::broadcast_to(row, {2, 4}); }, {"broadcast_to", "(3,)", "(2, 4)"});
  expect_error<ShapeError>([&] { F::broadcast_to(iota({2, 3}), {1, 3}); }, {"broadcast_to", "(2, 3)", "(1, 3)"});
}

TEST_CASE("sum_to sums back to a broadcastable shape") {
  const Variable x = iota({2, 3});
  expect_values(F::sum_to(x, {3}).data(), {3, 5, 7});
  const Variable column = F::sum_to(x, {2, 1});
  CHECK(column.shape() == Shape{2, 1});
  expect_values(column.data(), {3, 12});
  expect_values(F::sum_to(x, {1, 3}).data(), {3, 5, 7});
  CHECK(F::sum_to(x, {2, 3}).is(x));
  check_unary([](const Variable& v) { return F::sum_to(v, {3, 1}); }, random({2, 3, 4}, 27));
  expect_error<ShapeError>([&] { F::sum_to(x, {4}); }, {"sum_to", "(2, 3)", "(4,)"});
  expect_error<ShapeError>([&] { F::sum_to(x, {2, 2, 3}); }, {"sum_to", "(2, 3)", "(2, 2, 3)"});
}
