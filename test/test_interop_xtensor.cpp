// kusari::interop's xtensor views: round trips at several ranks, aliasing in both directions, strided
// views, column-major containers, lifetime through shared_ptr, copies, and every error message.

#include <kusari/kusari.h>
#include <kusari/interop/xtensor.h>

#include <xtensor/xview.hpp>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

// An array whose storage claims to be on a CUDA device (never dereferenced).
Array array_on_cuda() {
  auto storage = std::make_shared<Storage>();
  storage->device = Device::cuda(1);
  storage->nbytes = 16;
  return Array::from_storage(storage, {2, 2}, {2, 1}, 0, Dtype::float32);
}

}  // namespace

TEST_CASE("as_xtensor adapts an array of any rank in place, writes seen both ways") {
  const Array a = Array::arange(0, 24, 1, Dtype::float64).reshape({2, 3, 4});
  auto x = interop::as_xtensor<double>(a);
  CHECK(x.dimension() == 3);
  CHECK(x.shape()[1] == 3);
  CHECK(x(1, 2, 3) == 23);
  CHECK(x.data() == a.data<double>());
  x(0, 1, 2) = -1;
  CHECK(a.to_vector<double>()[6] == -1);
  a.fill(0.5);
  CHECK(xt::sum(x)() == 12);
  const Array s = Array::scalar(4, Dtype::int32);
  CHECK(interop::as_xtensor<int32_t>(s)() == 4);
}

TEST_CASE("as_xtensor keeps the strides of transposed, sliced and broadcast views") {
  const Array a = Array::arange(0, 12, 1, Dtype::float32).reshape({3, 4});
  auto t = interop::as_xtensor<float>(a.transpose());
  CHECK(t.shape()[0] == 4);
  CHECK(t(3, 2) == 11);
  const Array odd = a.get_item({Slice{}, Slice{1, 4, 2}});
  auto xo = interop::as_xtensor<float>(odd);
  CHECK(xo(2, 1) == 11);
  xo(0, 0) = 50;
  CHECK(a.to_vector<float>()[1] == 50);
  // Filling the view leaves the elements between its columns alone.
  xo.fill(9);
  expect_values(a, {0, 9, 2, 9, 4, 9, 6, 9, 8, 9, 10, 9});
  const Array row = Array::arange(0, 3, 1, Dtype::float32).reshape({1, 3}).broadcast_to({4, 3});
  auto xb = interop::as_xtensor<float>(row);
  CHECK(xb(3, 2) == 2);
  CHECK(xt::sum(xb)() == 12);
  // xtensor arithmetic on the view equals kusari's.
  xt::xarray<float> twice = 2.0f * interop::as_xtensor<float>(a);
  expect_close(interop::from_xtensor(twice), a * 2.0);
}

TEST_CASE("from_xtensor shares a container's memory, row- or column-major") {
  xt::xarray<float> x = {{1, 2, 3}, {4, 5, 6}};
  const Array a = interop::from_xtensor(x);
  CHECK(a.shape() == Shape{2, 3});
  CHECK(a.raw_data() == x.data());
  CHECK(a.is_contiguous());
  a.get_item({0, 1}).fill(20);
  CHECK(x(0, 1) == 20);
  x(1, 2) = -6;
  CHECK(a.to_vector<float>()[5] == -6);

  xt::xtensor<double, 2, xt::layout_type::column_major> c = {{1, 2}, {3, 4}};
  const Array ac = interop::from_xtensor(c);
  CHECK(!ac.is_contiguous());
  expect_values(ac, {1, 2, 3, 4});

  xt::xtensor<int64_t, 3> three = xt::zeros<int64_t>({2, 1, 3});
  const Array a3 = interop::from_xtensor(three);
  CHECK(a3.shape() == Shape{2, 1, 3});
  CHECK(a3.dtype() == Dtype::int64);
  CHECK(a3.is_contiguous());
}

TEST_CASE("from_xtensor of a strided view keeps its strides and offset") {
  xt::xarray<double> x = xt::arange<double>(0, 20);
  x.reshape({4, 5});
  auto view = xt::strided_view(x, {xt::range(1, 4), xt::range(0, 5, 2)});
  const Array a = interop::from_xtensor(view);
  CHECK(a.shape() == Shape{3, 3});
  expect_values(a, {5, 7, 9, 10, 12, 14, 15, 17, 19});
  a.fill(0);
  CHECK(x(2, 2) == 0);
  CHECK(x(2, 1) == 11);
}

TEST_CASE("a gradient read back as an xtensor view") {
  auto input = std::make_shared<xt::xarray<float>>(xt::xarray<float>{1, 2, 3});
  Variable v(interop::from_xtensor(input));
  Variable y = F::sum(v * v * v);
  y.backward();
  auto gradient = interop::as_xtensor<float>(v.grad());
  CHECK(gradient(0) == 3);
  CHECK(gradient(2) == 27);
}

TEST_CASE("an array built from a shared container outlives the caller's handle") {
  std::weak_ptr<xt::xarray<float>> watch;
  Array a;
  {
    auto x = std::make_shared<xt::xarray<float>>(xt::ones<float>({2, 2}));
    watch = x;
    a = interop::from_xtensor(x);
  }
  CHECK(!watch.expired());
  expect_values(a, {1, 1, 1, 1});
  a = Array();
  CHECK(watch.expired());
}

TEST_CASE("from_xtensor(x, copy) owns its values and takes any expression") {
  xt::xarray<float> x = {1, 2, 3};
  const Array c = interop::from_xtensor(x, interop::copy);
  CHECK(c.raw_data() != x.data());
  x.fill(0);
  expect_values(c, {1, 2, 3});
  expect_values(interop::from_xtensor(xt::arange<double>(0, 3) * 2.0, interop::copy), {0, 2, 4});
}

TEST_CASE("as_xtensor and from_xtensor refuse what the other side cannot be, naming both sides") {
  const Array a = Array::arange(0, 6, 1, Dtype::float32).reshape({2, 3});
  expect_error<DtypeError>([&] { interop::as_xtensor<int32_t>(a); },
                           {"interop::as_xtensor", "expected an array of dtype int32", "got float32"});
  expect_error<DeviceError>([&] { interop::as_xtensor<float>(array_on_cuda()); },
                            {"interop::as_xtensor", "expected an array on the host", "cuda:1"});
  const Array reversed = a.get_item({Slice{}, Slice{std::nullopt, std::nullopt, -1}});
  expect_error<ValueError>([&] { interop::as_xtensor<float>(reversed); },
                           {"interop::as_xtensor", "non-negative strides", "got stride -1 on axis 1"});
  xt::xarray<float> x = xt::arange<float>(0, 6);
  auto backwards = xt::strided_view(x, {xt::range(5, xt::placeholders::_, -1)});
  expect_error<ValueError>([&] { interop::from_xtensor(backwards); },
                           {"interop::from_xtensor", "non-negative strides", "got stride -1 on axis 0"});
  expect_error<ValueError>([&] { interop::from_xtensor(std::shared_ptr<xt::xarray<float>>()); },
                           {"interop::from_xtensor", "null shared_ptr"});
}
