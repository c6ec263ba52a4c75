// kusari::interop's Eigen views: round trips, aliasing in both directions, strides of blocks and
// transposes, the half types, lifetime through shared_ptr, copies, and every error message.

#include <kusari/kusari.h>
#include <kusari/interop/eigen.h>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

// A 3×4 float array holding 0..11 in row-major order.
Array iota34() { return Array::arange(0, 12, 1, Dtype::float32).reshape({3, 4}); }

// An array whose storage claims to be on a CUDA device (never dereferenced).
Array array_on_cuda() {
  auto storage = std::make_shared<Storage>();
  storage->device = Device::cuda(0);
  storage->nbytes = 16;
  return Array::from_storage(storage, {4}, {1}, 0, Dtype::float32);
}

}  // namespace

TEST_CASE("as_eigen maps a 2-D array in place: values, strides and writes both ways") {
  Array a = iota34();
  auto m = interop::as_eigen<float>(a);
  CHECK(m.rows() == 3);
  CHECK(m.cols() == 4);
  CHECK(m.data() == a.data<float>());
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) CHECK(m(r, c) == static_cast<float>(4 * r + c));
  m(1, 2) = -5;
  CHECK(a.to_vector<float>()[6] == -5);
  a.fill(2);
  CHECK(m.sum() == 24);
}

TEST_CASE("as_eigen keeps the strides of transposed and sliced views") {
  const Array a = iota34();
  const Array t = a.transpose();
  auto mt = interop::as_eigen<float>(t);
  CHECK(mt.rows() == 4);
  CHECK(mt.cols() == 3);
  CHECK(mt(3, 1) == 7);
  const Array column = a.get_item({Slice{}, 2});  // 1-D, stride 4
  auto mc = interop::as_eigen<float>(column);
  CHECK(mc.rows() == 3);
  CHECK(mc.cols() == 1);
  CHECK(mc(2, 0) == 10);
  const Array every_other = a.get_item({Slice{}, Slice{0, 4, 2}});
  auto me = interop::as_eigen<float>(every_other);
  CHECK(me.cols() == 2);
  CHECK(me(2, 1) == 10);
  me(0, 1) = 100;
  CHECK(a.to_vector<float>()[2] == 100);
  // Eigen arithmetic on the map equals the same product computed by kusari.
  const Eigen::MatrixXf product = mt * interop::as_eigen<float>(a);
  expect_close(interop::from_eigen(product, interop::copy), ops::matmul(a.transpose(), a));
}

TEST_CASE("as_eigen views every dtype with its C++ type, the half types as Eigen's") {
  const Array d = Array::arange(0, 4, 1, Dtype::float64);
  CHECK(interop::as_eigen<double>(d).sum() == 6);
  const Array i = Array::arange(0, 4, 1, Dtype::int64);
  CHECK(interop::as_eigen<int64_t>(i)(3, 0) == 3);
  const Array h = Array::from_vector<float>({1.5f, -2}, {2}, Dtype::float16);
  auto mh = interop::as_eigen<Eigen::half>(h);
  CHECK(static_cast<float>(mh(0, 0)) == 1.5f);
  mh(1, 0) = Eigen::half(0.25f);
  CHECK(h.to_vector<float>()[1] == 0.25f);
  const Array b = Array::from_vector<float>({3, 0.5f}, {2}, Dtype::bfloat16);
  auto mb = interop::as_eigen<Eigen::bfloat16>(b);
  CHECK(static_cast<float>(mb(0, 0)) == 3);
  mb(1, 0) = Eigen::bfloat16(-8.0f);
  CHECK(b.to_vector<float>()[1] == -8);
}

TEST_CASE("from_eigen shares a matrix's memory in either storage order") {
  Eigen::MatrixXf column_major(2, 3);
  column_major << 1, 2, 3, 4, 5, 6;
  const Array a = interop::from_eigen(column_major);
  CHECK(a.shape() == Shape{2, 3});
  CHECK(a.raw_data() == column_major.data());
  expect_values(a, {1, 2, 3, 4, 5, 6});
  CHECK(!a.is_contiguous());
  a.get_item({1, 2}).fill(60);
  CHECK(column_major(1, 2) == 60);
  column_major(0, 0) = -1;
  CHECK(a.to_vector<float>()[0] == -1);

  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major(2, 2);
  row_major << 1, 2, 3, 4;
  const Array r = interop::from_eigen(row_major);
  CHECK(r.is_contiguous());
  CHECK(r.dtype() == Dtype::float64);
  expect_values(r, {1, 2, 3, 4});
}

TEST_CASE("from_eigen of a vector is 1-D; of a block it keeps the block's strides") {
  Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(5, 0, 4);
  const Array a = interop::from_eigen(v);
  CHECK(a.shape() == Shape{5});
  expect_values(a, {0, 1, 2, 3, 4});
  Eigen::MatrixXf m = Eigen::MatrixXf::Zero(4, 4);
  auto block = m.block(1, 1, 2, 3);
  const Array b = interop::from_eigen(block);
  CHECK(b.shape() == Shape{2, 3});
  b.fill(7);
  CHECK(m.sum() == 42);
  CHECK(m(2, 3) == 7);
  CHECK(m(0, 0) == 0);
  // An Array-of-Eigen round trip: the map of the shared array is the matrix again.
  auto back = interop::as_eigen<float>(interop::from_eigen(m));
  CHECK(back.isApprox(m));
  CHECK(back.data() == m.data());
}

TEST_CASE("a Variable built on a shared matrix trains it in place") {
  auto weights = std::make_shared<Eigen::MatrixXf>(Eigen::MatrixXf::Ones(2, 2));
  Variable w(interop::from_eigen(weights));
  Variable loss = F::sum(w * w);
  loss.backward();
  const auto gradient = interop::as_eigen<float>(w.grad());
  CHECK(gradient.isApprox(Eigen::MatrixXf::Constant(2, 2, 2)));
  w.data().assign(w.data() - w.grad() * 0.25);
  CHECK(weights->isApprox(Eigen::MatrixXf::Constant(2, 2, 0.5)));
}

TEST_CASE("an array built from a shared matrix outlives the caller's handle") {
  std::weak_ptr<Eigen::MatrixXd> watch;
  Array a;
  {
    auto m = std::make_shared<Eigen::MatrixXd>(Eigen::MatrixXd::Constant(3, 2, 1.5));
    watch = m;
    a = interop::from_eigen(m);
  }
  CHECK(!watch.expired());
  expect_values(a, std::vector<double>(6, 1.5));
  Array view = a.get_item({Slice{1, 3}});
  a = Array();
  CHECK(!watch.expired());
  expect_values(view, std::vector<double>(4, 1.5));
  view = Array();
  CHECK(watch.expired());
}

TEST_CASE("from_eigen(m, copy) owns its values") {
  Eigen::MatrixXf m(2, 2);
  m << 1, 2, 3, 4;
  const Array c = interop::from_eigen(m, interop::copy);
  CHECK(c.raw_data() != m.data());
  CHECK(c.is_contiguous());
  m.setZero();
  expect_values(c, {1, 2, 3, 4});
  // Any expression, not only one with memory.
  expect_values(interop::from_eigen(Eigen::MatrixXf::Identity(2, 2) * 3, interop::copy), {3, 0, 0, 3});
  const Eigen::Vector3i v(1, 2, 3);
  const Array cv = interop::from_eigen(v, interop::copy);
  CHECK(cv.shape() == Shape{3});
  CHECK(cv.dtype() == Dtype::int32);
}

TEST_CASE("as_eigen and from_eigen refuse what Eigen or the array cannot be, naming both sides") {
  const Array a = iota34();
  expect_error<DtypeError>([&] { interop::as_eigen<double>(a); },
                           {"interop::as_eigen", "expected an array of dtype float64", "got float32"});
  expect_error<DeviceError>([&] { interop::as_eigen<float>(array_on_cuda()); },
                            {"interop::as_eigen", "expected an array on the host", "cuda:0", "to(Device::cpu())"});
  expect_error<ShapeError>([&] { interop::as_eigen<float>(a.reshape({3, 2, 2})); },
                           {"interop::as_eigen", "expected a 1-D or 2-D array", "(3, 2, 2)"});
  expect_error<ShapeError>([&] { interop::as_eigen<float>(Array::scalar(1)); },
                           {"expected a 1-D or 2-D array", "()"});
  const Array reversed = a.get_item({Slice{std::nullopt, std::nullopt, -1}});
  expect_error<ValueError>([&] { interop::as_eigen<float>(reversed); },
                           {"interop::as_eigen", "non-negative strides", "got stride -4 on axis 0"});
  expect_error<ValueError>([&] { interop::as_eigen<float>(Array()); }, {"expected a defined array"});
  expect_error<ValueError>([&] { interop::from_eigen(std::shared_ptr<Eigen::MatrixXf>()); },
                           {"interop::from_eigen", "null shared_ptr"});
}
