// Array creation, views (reshape, transpose, broadcast_to, get_item, expand_dims, squeeze), copies and
// conversions, in-place assign/fill, host access and the error messages of each.

#include <cmath>
#include <limits>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

const std::vector<Dtype> kAllDtypes = {Dtype::float32, Dtype::float16, Dtype::bfloat16, Dtype::float64,
                                       Dtype::int32,   Dtype::int64,   Dtype::uint8,    Dtype::bool_};

std::vector<double> values(const Array& a) { return a.to_vector<double>(); }

// 0, 1, ..., n-1 in the given shape, as float64.
Array iota(const Shape& shape) { return Array::arange(0, static_cast<double>(shape.numel()), 1, Dtype::float64).reshape(shape); }

constexpr auto none = std::nullopt;

}  // namespace

TEST_CASE("zeros, ones, full and scalar fill every dtype") {
  for (Dtype d : kAllDtypes) {
    INFO("dtype ", d);
    const Array z = Array::zeros({2, 3}, d), o = Array::ones({2, 3}, d), f = Array::full({4}, 3, d);
    CHECK(z.dtype() == d);
    CHECK(z.shape() == Shape{2, 3});
    CHECK(values(z) == std::vector<double>(6, 0));
    CHECK(values(o) == std::vector<double>(6, 1));
    CHECK(values(f) == std::vector<double>(4, d == Dtype::bool_ ? 1 : 3));
    const Array s = Array::scalar(2, d);
    CHECK(s.ndim() == 0);
    CHECK(s.size() == 1);
    CHECK(s.item<double>() == (d == Dtype::bool_ ? 1 : 2));
    CHECK(z.is_contiguous());
    CHECK(z.nbytes() == 6 * static_cast<int64_t>(itemsize(d)));
    CHECK(z.device() == Device::cpu());
  }
  CHECK(Array::full({2}, -1.5, Dtype::float16).to_vector<float>() == std::vector<float>{-1.5f, -1.5f});
  CHECK(Array::full({1}, 0.5, Dtype::bool_).item<bool>());
  CHECK(Array::zeros({}).shape() == Shape{});
}

TEST_CASE("arange counts like numpy.arange") {
  CHECK(values(Array::arange(0, 5)) == std::vector<double>{0, 1, 2, 3, 4});
  CHECK(values(Array::arange(1, 2, 0.25)) == std::vector<double>{1, 1.25, 1.5, 1.75});
  CHECK(values(Array::arange(5, 0, -2, Dtype::int32)) == std::vector<double>{5, 3, 1});
  CHECK(values(Array::arange(0, 1, 0.3, Dtype::float64)) == std::vector<double>{0, 0.3, 0.6, 0.8999999999999999});
  CHECK(Array::arange(3, 3).size() == 0);
  CHECK(Array::arange(3, 0).shape() == Shape{0});
  CHECK(Array::arange(0, 4, 1, Dtype::int64).dtype() == Dtype::int64);
  expect_error<ValueError>([] { Array::arange(0, 1, 0); }, {"arange", "non-zero step"});
}

TEST_CASE("from_vector converts to the requested dtype and checks the count") {
  CHECK(values(Array::from_vector<double>({1.5, -2.7, 3.99}, {3}, Dtype::int32)) == std::vector<double>{1, -2, 3});
  CHECK(values(Array::from_vector<double>({0, 255, 7.9}, {3}, Dtype::uint8)) == std::vector<double>{0, 255, 7});
  CHECK(Array::from_vector<double>({0, 0.5, -1}, {3}, Dtype::bool_).to_vector<bool>() ==
        std::vector<bool>{false, true, true});
  CHECK(values(Array::from_vector<bool>({true, false}, {2}, Dtype::float32)) == std::vector<double>{1, 0});
  CHECK(Array::from_vector<bool>({true, false}, {2}).dtype() == Dtype::bool_);
  CHECK(Array::from_vector<int32_t>({1, 2}, {2}).dtype() == Dtype::int32);
  CHECK(Array::from_vector<int64_t>({1, 2}, {2}).dtype() == Dtype::int64);
  CHECK(Array::from_vector<uint8_t>({1, 2}, {2}).dtype() == Dtype::uint8);
  CHECK(values(Array::from_vector<float>({0.1f}, {1}, Dtype::bfloat16)) == std::vector<double>{0.10009765625});
  const Array big = Array::from_vector<int64_t>({(int64_t{1} << 62) + 1}, {1});
  CHECK(big.item<int64_t>() == (int64_t{1} << 62) + 1);  // int64 values round-trip exactly
  CHECK(Array::from_vector<float>({}, {0, 4}).shape() == Shape{0, 4});
  expect_error<ShapeError>([] { Array::from_vector<float>({1, 2, 3, 4, 5}, {2, 3}); },
                           {"from_vector", "6 values", "(2, 3)", "got 5"});
}

TEST_CASE("empty shapes are allowed and negative extents are not") {
  const Array e = Array::zeros({2, 0, 3});
  CHECK(e.size() == 0);
  CHECK(e.nbytes() == 0);
  CHECK(e.to_vector<float>().empty());
  CHECK(e.copy().shape() == Shape{2, 0, 3});
  CHECK(e.astype(Dtype::int32).shape() == Shape{2, 0, 3});
  CHECK(e.transpose().shape() == Shape{3, 0, 2});
  CHECK(e.reshape({0, 6}).shape() == Shape{0, 6});
  CHECK(e.reshape({-1}).shape() == Shape{0});
  CHECK(e.get_item({Slice{}, Slice{}, 1}).shape() == Shape{2, 0});
  e.fill(1);  // no elements, no effect
  expect_error<ShapeError>([] { Array::zeros({2, -1}); }, {"non-negative", "(2, -1)"});
  expect_error<ShapeError>([] { Array::empty({-3}); }, {"non-negative", "(-3,)"});
  expect_error<ShapeError>([&] { e.reshape({0, -1}); }, {"reshape", "(2, 0, 3)", "(0, -1)"});
  // An empty shape whose other extents multiply past 2^63 has no strides to give.
  const int64_t huge = int64_t{1} << 32;
  expect_error<ShapeError>([&] { Array::empty({0, huge, huge}); }, {"(0, 4294967296, 4294967296)", "64-bit strides"});
}

TEST_CASE("reshape returns a view of contiguous input, inferring one -1 extent") {
  const Array a = iota({2, 3});
  const Array r = a.reshape({3, -1});
  CHECK(r.shape() == Shape{3, 2});
  CHECK(r.storage() == a.storage());
  CHECK(values(r) == std::vector<double>{0, 1, 2, 3, 4, 5});
  CHECK(a.reshape({-1}).shape() == Shape{6});
  CHECK(a.reshape({1, 6, 1}).strides() == Strides{6, 1, 1});
  CHECK(Array::scalar(4).reshape({1, 1}).shape() == Shape{1, 1});
}

TEST_CASE("reshape of the wrong size names both shapes") {
  const Array a = iota({2, 3});
  expect_error<ShapeError>([&] { a.reshape({4, 2}); }, {"reshape", "(2, 3)", "6 elements", "(4, 2)", "8 elements"});
  expect_error<ShapeError>([&] { a.reshape({4, -1}); }, {"reshape", "(2, 3)", "(4, -1)"});
  expect_error<ShapeError>([&] { a.reshape({-1, -1}); }, {"reshape", "at most one -1"});
  expect_error<ShapeError>([&] { a.reshape({-2, -3}); }, {"reshape", "non-negative"});
  expect_error<ShapeError>([&] { a.reshape({}); }, {"reshape", "(2, 3)", "()"});
}

TEST_CASE("reshape of a non-contiguous view copies in row-major order") {
  const Array a = iota({2, 3});
  const Array t = a.transpose();
  CHECK_FALSE(t.is_contiguous());
  const Array r = t.reshape({6});
  CHECK(r.storage() != a.storage());
  CHECK(values(r) == std::vector<double>{0, 3, 1, 4, 2, 5});
  const Array strided = iota({10}).get_item({Slice{1, none, 3}});
  CHECK(values(strided.reshape({3, 1})) == std::vector<double>{1, 4, 7});
  const Array broadcast = iota({3}).broadcast_to({2, 3});
  CHECK(values(broadcast.reshape({3, 2})) == std::vector<double>{0, 1, 2, 0, 1, 2});
}

TEST_CASE("transpose permutes axes and strides without copying") {
  const Array a = iota({2, 3, 4});
  const Array t = a.transpose();
  CHECK(t.shape() == Shape{4, 3, 2});
  CHECK(t.strides() == Strides{1, 4, 12});
  CHECK(t.storage() == a.storage());
  CHECK(values(t.get_item({1, 2})) == std::vector<double>{9, 21});
  const Array p = a.transpose({1, -1, 0});
  CHECK(p.shape() == Shape{3, 4, 2});
  CHECK(values(p.get_item({2, 3})) == std::vector<double>{11, 23});
  CHECK(values(a.transpose({0, 1, 2})) == values(a));
  CHECK(Array::scalar(1).transpose().shape() == Shape{});
  expect_error<IndexError>([&] { a.transpose({0, 1}); }, {"transpose", "3 axes", "(2, 3, 4)", "got 2"});
  expect_error<IndexError>([&] { a.transpose({0, 0, 1}); }, {"transpose", "repeated"});
  expect_error<IndexError>([&] { a.transpose({0, 1, 3}); }, {"transpose", "[-3, 3)", "got 3"});
}

TEST_CASE("broadcast_to repeats with zero strides and rejects incompatible shapes") {
  const Array row = iota({3});
  const Array b = row.broadcast_to({2, 3});
  CHECK(b.strides() == Strides{0, 1});
  CHECK(b.storage() == row.storage());
  CHECK(values(b) == std::vector<double>{0, 1, 2, 0, 1, 2});
  const Array column = iota({3, 1});
  CHECK(values(column.broadcast_to({3, 2})) == std::vector<double>{0, 0, 1, 1, 2, 2});
  CHECK(values(Array::scalar(7).broadcast_to({2, 2})) == std::vector<double>{7, 7, 7, 7});
  CHECK(column.broadcast_to({2, 3, 0}).size() == 0);
  CHECK_FALSE(b.is_contiguous());
  expect_error<ShapeError>([&] { row.broadcast_to({4}); }, {"broadcast_to", "(3,)", "(4,)"});
  expect_error<ShapeError>([&] { row.broadcast_to({3, 2}); }, {"broadcast_to", "(3,)", "(3, 2)"});
  expect_error<ShapeError>([&] { iota({2, 3}).broadcast_to({3}); }, {"broadcast_to", "(2, 3)", "(3,)"});
}

TEST_CASE("get_item with integers, negative integers, new axes and an ellipsis") {
  const Array x = iota({2, 3, 4});
  CHECK(x.get_item({1}).shape() == Shape{3, 4});
  CHECK(values(x.get_item({1, 0})) == std::vector<double>{12, 13, 14, 15});
  CHECK(values(x.get_item({-1, -1})) == std::vector<double>{20, 21, 22, 23});
  CHECK(x.get_item({-2, -3, -4}).item<double>() == 0);
  CHECK(x.get_item({1, 2, 3}).ndim() == 0);
  CHECK(x.get_item({Ellipsis{}, 1}).shape() == Shape{2, 3});
  CHECK(values(x.get_item({Ellipsis{}, 1})) == std::vector<double>{1, 5, 9, 13, 17, 21});
  CHECK(values(x.get_item({0, Ellipsis{}, -1})) == std::vector<double>{3, 7, 11});
  CHECK(x.get_item({Ellipsis{}}).shape() == x.shape());
  CHECK(x.get_item({1, 2, 3, Ellipsis{}}).ndim() == 0);
  const Array n = x.get_item({NewAxis{}, 0, Ellipsis{}, NewAxis{}});
  CHECK(n.shape() == Shape{1, 3, 4, 1});
  CHECK(values(n) == values(x.get_item({0})));
  CHECK(x.get_item({}).shape() == x.shape());
}

TEST_CASE("get_item with slices and steps follows Python's rules") {
  const Array v = iota({10});
  auto sliced = [&](Slice s) { return values(v.get_item({s})); };
  CHECK(sliced(Slice{2, 5}) == std::vector<double>{2, 3, 4});
  CHECK(sliced(Slice{1, -1, 3}) == std::vector<double>{1, 4, 7});
  CHECK(sliced(Slice{-3, none}) == std::vector<double>{7, 8, 9});
  CHECK(sliced(Slice{none, none, -3}) == std::vector<double>{9, 6, 3, 0});
  CHECK(sliced(Slice{8, 2, -2}) == std::vector<double>{8, 6, 4});
  CHECK(sliced(Slice{-2, none, -1}) == std::vector<double>{8, 7, 6, 5, 4, 3, 2, 1, 0});
  CHECK(sliced(Slice{none, -8, -1}) == std::vector<double>{9, 8, 7, 6, 5, 4, 3});
  CHECK(sliced(Slice{-100, 100}) == values(v));
  CHECK(sliced(Slice{100, -100, -4}) == std::vector<double>{9, 5, 1});
  CHECK(sliced(Slice{5, 2}).empty());
  CHECK(sliced(Slice{2, 5, -1}).empty());
  CHECK(sliced(Slice{20, 30}).empty());
  const Array x = iota({2, 3, 4});
  const Array s = x.get_item({Slice{}, Slice{1, 3}, Slice{none, none, 2}});
  CHECK(s.shape() == Shape{2, 2, 2});
  CHECK(values(s) == std::vector<double>{4, 6, 8, 10, 16, 18, 20, 22});
  CHECK(values(x.get_item({0, Slice{none, none, -2}})) == std::vector<double>{8, 9, 10, 11, 0, 1, 2, 3});
  CHECK(values(x.get_item({0, Slice{5, 1, -2}})) == std::vector<double>{8, 9, 10, 11});
  CHECK(values(x.get_item({Ellipsis{}, Slice{none, none, -1}}).get_item({1, 0})) ==
        std::vector<double>{15, 14, 13, 12});
  CHECK(x.get_item({Slice{1, 1}}).shape() == Shape{0, 3, 4});
}

TEST_CASE("get_item views share storage with the array they index") {
  const Array x = Array::zeros({3, 4});
  const Array column = x.get_item({Slice{}, 1});
  CHECK(column.storage() == x.storage());
  column.fill(5);
  x.get_item({Slice{none, none, 2}, Slice{none, none, -3}}).fill(1);
  CHECK(values(x) == std::vector<double>{1, 5, 0, 1, 0, 5, 0, 0, 1, 5, 0, 1});
  x.get_item({-1, Slice{1, 3}}).assign(Array::from_vector<double>({7, 8}, {2}, Dtype::float32));
  CHECK(values(x.get_item({2})) == std::vector<double>{1, 7, 8, 1});
}

TEST_CASE("get_item rejects out-of-range indices, too many indices and bad slices") {
  const Array x = iota({2, 3});
  expect_error<IndexError>([&] { x.get_item({2}); }, {"get_item", "index 2", "axis 0", "extent 2"});
  expect_error<IndexError>([&] { x.get_item({0, -4}); }, {"get_item", "index -4", "axis 1", "extent 3"});
  expect_error<IndexError>([&] { x.get_item({0, 0, 0}); }, {"get_item", "too many indices", "(2, 3)"});
  expect_error<IndexError>([&] { x.get_item({Ellipsis{}, 0, Ellipsis{}}); }, {"get_item", "ellipsis"});
  expect_error<ValueError>([&] { x.get_item({Slice{0, 2, 0}}); }, {"get_item", "step", "zero"});
  expect_error<IndexError>([] { Array::scalar(1).get_item({0}); }, {"get_item", "too many indices", "()"});
}

TEST_CASE("expand_dims and squeeze insert and remove unit axes") {
  const Array x = iota({2, 3});
  CHECK(x.expand_dims(0).shape() == Shape{1, 2, 3});
  CHECK(x.expand_dims(2).shape() == Shape{2, 3, 1});
  CHECK(x.expand_dims(-1).shape() == Shape{2, 3, 1});
  CHECK(x.expand_dims(-3).shape() == Shape{1, 2, 3});
  CHECK(x.expand_dims(1).storage() == x.storage());
  CHECK(values(x.expand_dims(1)) == values(x));
  expect_error<IndexError>([&] { x.expand_dims(3); }, {"expand_dims", "[-3, 3)", "got 3"});
  const Array y = iota({1, 3, 1, 2});
  CHECK(y.squeeze().shape() == Shape{3, 2});
  CHECK(y.squeeze({0}).shape() == Shape{3, 1, 2});
  CHECK(y.squeeze({-2, 0}).shape() == Shape{3, 2});
  CHECK(values(y.squeeze()) == values(y));
  CHECK(Array::zeros({1, 1}).squeeze().shape() == Shape{});
  expect_error<ShapeError>([&] { y.squeeze({1}); }, {"squeeze", "axis 1", "extent 1", "got 3", "(1, 3, 1, 2)"});
  expect_error<IndexError>([&] { y.squeeze({4}); }, {"squeeze", "[-4, 4)"});
}

TEST_CASE("contiguous, copy and astype decide when to copy") {
  const Array a = iota({2, 3});
  CHECK(a.contiguous().storage() == a.storage());
  CHECK(a.astype(Dtype::float64).storage() == a.storage());
  CHECK(a.astype(Dtype::float64, true).storage() != a.storage());
  const Array c = a.copy();
  CHECK(c.storage() != a.storage());
  c.fill(0);
  CHECK(values(a) == std::vector<double>{0, 1, 2, 3, 4, 5});
  const Array t = a.transpose();
  const Array tc = t.contiguous();
  CHECK(tc.is_contiguous());
  CHECK(tc.storage() != t.storage());
  CHECK(values(tc) == values(t));
  // Unit axes do not break contiguity whatever their stride.
  CHECK(a.expand_dims(0).is_contiguous());
  CHECK(a.get_item({Slice{0, 1}}).is_contiguous());
  CHECK_FALSE(a.get_item({Slice{}, Slice{0, 2}}).is_contiguous());
  CHECK(a.get_item({1}).contiguous().storage() == a.storage());
  CHECK(a.get_item({1}).offset() == 3);
}

TEST_CASE("astype converts every dtype pair on strided views") {
  // Small non-negative integers are exact in every dtype.
  const std::vector<double> source = {0, 1, 2, 3, 5, 7, 100, 0, 9, 4, 6, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21};
  const Array reference = Array::from_vector(source, {4, 6}, Dtype::float64);
  auto view_of = [](const Array& a) { return a.transpose().get_item({Slice{none, none, 2}, Slice{none, none, -1}}); };
  const std::vector<double> viewed = values(view_of(reference));
  REQUIRE(viewed.size() == 12);
  for (Dtype from : kAllDtypes) {
    for (Dtype to : kAllDtypes) {
      INFO("from ", from, " to ", to);
      const Array view = view_of(reference.astype(from));
      REQUIRE_FALSE(view.is_contiguous());
      const Array converted = view.astype(to);
      CHECK(converted.dtype() == to);
      CHECK(converted.shape() == Shape{3, 4});
      // A matching dtype returns the view itself; any other is a contiguous copy.
      CHECK((from == to ? converted.storage() == view.storage() : converted.is_contiguous()));
      std::vector<double> expected = viewed;
      for (double& v : expected) {
        if (from == Dtype::bool_ || to == Dtype::bool_) v = v != 0;
      }
      CHECK(values(converted) == expected);
      CHECK(values(view.copy()) == values(view));
    }
  }
}

TEST_CASE("astype rounds and truncates like C++ conversions") {
  const Array x = Array::from_vector<double>({-1.75, -0.5, 0.5, 1.5, 2.5, 1e10}, {6});
  CHECK(values(x.astype(Dtype::int64)) == std::vector<double>{-1, 0, 0, 1, 2, 1e10});
  CHECK(values(x.get_item({Slice{0, 5}}).astype(Dtype::int32)) == std::vector<double>{-1, 0, 0, 1, 2});
  CHECK(values(Array::from_vector<double>({1.0 / 3}, {1}).astype(Dtype::float32)) ==
        std::vector<double>{static_cast<float>(1.0 / 3)});
  CHECK(values(Array::from_vector<double>({70000, -1e-8}, {2}).astype(Dtype::float16)) ==
        std::vector<double>{INFINITY, -0.0});
  CHECK(std::signbit(values(Array::from_vector<double>({-1e-8}, {1}).astype(Dtype::float16))[0]));
}

TEST_CASE("a floating value beyond an integer's range saturates, NaN becomes 0, on every path") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> x = {-2.7, 254.9, 300, -1e30, 1e30, nan, -INFINITY, INFINITY, 2147483647.9, -2147483648.9};
  for (const Dtype from : {Dtype::float64, Dtype::float32}) {
    INFO("from ", from);
    const Array a = Array::from_vector(x, {10}).astype(from);
    CHECK(values(a.astype(Dtype::uint8)) == std::vector<double>{0, 254, 255, 0, 255, 0, 0, 255, 255, 0});
    CHECK(a.astype(Dtype::int64).to_vector<int64_t>() ==
          std::vector<int64_t>{-2, 254, 300, INT64_MIN, INT64_MAX, 0, INT64_MIN, INT64_MAX,
                               from == Dtype::float64 ? 2147483647 : 2147483648LL, -2147483648LL});
    CHECK(a.astype(Dtype::int32).to_vector<int32_t>() ==
          std::vector<int32_t>{-2, 254, 300, INT32_MIN, INT32_MAX, 0, INT32_MIN, INT32_MAX, INT32_MAX, INT32_MIN});
  }
  const Array f = Array::from_vector<float>({9.3e18f, -9.3e18f}, {2});
  CHECK(f.astype(Dtype::int64).to_vector<int64_t>() == std::vector<int64_t>{INT64_MAX, INT64_MIN});
  const Array u = Array::zeros({2}, Dtype::uint8);
  u.fill(-1);
  CHECK(values(u) == std::vector<double>{0, 0});
  u.fill(nan);
  CHECK(values(u) == std::vector<double>{0, 0});
  CHECK(Array::from_vector<double>({1e12}, {1}).item<int32_t>() == INT32_MAX);
  CHECK(Array::from_vector<double>({nan}, {1}).to_vector<int64_t>() == std::vector<int64_t>{0});
}

TEST_CASE("assign broadcasts, converts and writes through views") {
  const Array dst = Array::zeros({2, 3});
  dst.assign(Array::from_vector<float>({1, 2, 3}, {3}));
  CHECK(values(dst) == std::vector<double>{1, 2, 3, 1, 2, 3});
  dst.assign(Array::from_vector<double>({10, 20}, {2, 1}, Dtype::float64));
  CHECK(values(dst) == std::vector<double>{10, 10, 10, 20, 20, 20});
  dst.assign(Array::scalar(-1, Dtype::int32));
  CHECK(values(dst) == std::vector<double>(6, -1));
  dst.get_item({Slice{}, 1}).assign(Array::from_vector<double>({4, 5}, {2}, Dtype::float32));
  CHECK(values(dst) == std::vector<double>{-1, 4, -1, -1, 5, -1});
  dst.transpose().get_item({2}).assign(Array::scalar(9));
  CHECK(values(dst) == std::vector<double>{-1, 4, 9, -1, 5, 9});
  const Array ints = Array::zeros({3}, Dtype::int32);
  ints.assign(Array::from_vector<double>({1.9, -2.9, 3.1}, {3}));
  CHECK(values(ints) == std::vector<double>{1, -2, 3});
  expect_error<ShapeError>([&] { dst.assign(Array::zeros({4})); }, {"broadcast_to", "(4,)", "(2, 3)"});
  expect_error<ShapeError>([&] { dst.get_item({0}).assign(Array::zeros({2, 3})); }, {"(2, 3)", "(3,)"});
}

TEST_CASE("assign from an overlapping view of the same storage reads the source first") {
  const Array v = iota({6});
  v.assign(v.get_item({Slice{none, none, -1}}));
  CHECK(values(v) == std::vector<double>{5, 4, 3, 2, 1, 0});
  const Array w = iota({6});
  w.get_item({Slice{1, none}}).assign(w.get_item({Slice{none, -1}}));
  CHECK(values(w) == std::vector<double>{0, 0, 1, 2, 3, 4});
  const Array m = iota({3, 3});
  m.assign(m.transpose());
  CHECK(values(m) == std::vector<double>{0, 3, 6, 1, 4, 7, 2, 5, 8});
}

TEST_CASE("fill writes through views, converting to the dtype") {
  const Array m = Array::zeros({3, 4}, Dtype::int32);
  m.get_item({Slice{}, 1}).fill(5.7);
  m.get_item({1}).fill(-2);
  CHECK(values(m) == std::vector<double>{0, 5, 0, 0, -2, -2, -2, -2, 0, 5, 0, 0});
  const Array b = Array::zeros({4}, Dtype::bool_);
  b.get_item({Slice{none, none, 3}}).fill(2);
  CHECK(b.to_vector<bool>() == std::vector<bool>{true, false, false, true});
  const Array u = Array::zeros({2}, Dtype::uint8);
  u.fill(200);
  CHECK(values(u) == std::vector<double>{200, 200});
  const Array s = Array::scalar(0, Dtype::bfloat16);
  s.fill(3.140625);
  CHECK(s.item<float>() == 3.140625f);
}

TEST_CASE("to_vector and item convert on the way out") {
  const Array x = Array::from_vector<double>({1.5, -2.5, 0}, {3});
  CHECK(x.to_vector<float>() == std::vector<float>{1.5f, -2.5f, 0});
  CHECK(x.to_vector<int32_t>() == std::vector<int32_t>{1, -2, 0});
  CHECK(x.to_vector<bool>() == std::vector<bool>{true, true, false});
  CHECK(x.get_item({1}).item<double>() == -2.5);
  CHECK(x.get_item({Slice{2, 3}}).reshape({1, 1}).item<int64_t>() == 0);
  CHECK(iota({2, 3}).transpose().to_vector<double>() == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(*x.data<double>() == 1.5);
  expect_error<ShapeError>([&] { x.item<double>(); }, {"item", "size 1", "(3,)"});
  expect_error<ShapeError>([] { Array::zeros({0}).item<float>(); }, {"item", "(0,)"});
  expect_error<DtypeError>([&] { x.data<float>(); }, {"data", "float64", "float32"});
}

TEST_CASE("an undefined array says so") {
  const Array undefined;
  CHECK_FALSE(undefined.defined());
  expect_error<ValueError>([&] { undefined.reshape({1}); }, {"reshape", "undefined"});
  expect_error<ValueError>([&] { undefined.to_vector<float>(); }, {"to_vector", "undefined"});
  expect_error<ValueError>([&] { undefined.copy(); }, {"undefined"});
  expect_error<ValueError>([&] { Array::zeros({1}).assign(undefined); }, {"assign", "undefined"});
  CHECK(undefined.to_string() == "array(undefined)");
}

TEST_CASE("as_strided and from_storage build arbitrary views of one storage") {
  const Array base = iota({6});
  const Array windows = base.as_strided({4, 3}, {1, 1}, 0);
  CHECK(values(windows.get_item({3})) == std::vector<double>{3, 4, 5});
  CHECK(values(Array::from_storage(base.storage(), {2}, {2}, 1, Dtype::float64)) == std::vector<double>{1, 3});
  expect_error<ShapeError>([&] { base.as_strided({2, 2}, {1}, 0); }, {"as_strided", "2 strides", "(2, 2)", "got 1"});
  expect_error<ValueError>([] { Array::from_storage(nullptr, {1}, {1}, 0, Dtype::float32); }, {"from_storage"});
  CHECK(base.to(Device::cpu()).storage() == base.storage());
}
