// The loopback device: its own memory and kernels, the host access it refuses, transfers, mixing
// errors, and whole training steps that equal the CPU's to the bit.

#include "testing.h"

#include <cmath>
#include <filesystem>
#include <unistd.h>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/ops/copy.h>

using namespace kusari;
using namespace kusari::testing;
namespace M = L::models;

namespace {

const Device loopback = Device::loopback(0);

// Every parameter of `model` on the host, in namedparams() order.
template <class Model>
std::vector<Array> host_parameters(const Model& model) {
  std::vector<Array> out;
  for (const auto& [name, param] : model.namedparams()) out.push_back(param.data().to(Device::cpu()));
  return out;
}

// Three momentum-SGD steps of `model` (created on `device`) on fixed data; returns its parameters.
template <class Model, class Make>
std::vector<Array> trained(const Device& device, Make make, const Shape& input, int64_t classes) {
  const DeviceScope scope(device);
  manual_seed(11);  // the same initial parameters on every device
  auto model = make();
  optimizers::MomentumSGD optimizer(0.05, 0.9);
  optimizer.setup(model);
  const Variable x(Array::normal(input, 0, 1, 7), false);
  const Variable t(Array::uniform({input[0]}, 0, static_cast<double>(classes), 8).astype(Dtype::int32), false);
  for (int step = 0; step < 3; ++step) {
    optimizer.update([&] { return F::softmax_cross_entropy(model->forward(x), t); });
  }
  for (const auto& [name, param] : model->namedparams()) REQUIRE(param.data().device() == device);
  return host_parameters(*model);
}

void expect_identical(const std::vector<Array>& a, const std::vector<Array>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) expect_close(a[i], b[i], 0, 0);
}

}  // namespace

TEST_CASE("loopback devices parse, print and compare") {
  CHECK(Device::parse("loopback:0") == loopback);
  CHECK(Device::parse("loopback:3") == Device::loopback(3));
  CHECK(Device::loopback(2).to_string() == "loopback:2");
  CHECK(!(Device::loopback(0) == Device::loopback(1)));
  expect_error<ValueError>([] { Device::parse("loopback:"); }, {"loopback:N", "'loopback:'"});
  expect_error<ValueError>([] { Device::parse("loopback:x"); }, {"'loopback:x'"});
}

TEST_CASE("a DeviceScope sets the default device of this thread and nests") {
  CHECK(default_device() == Device::cpu());
  {
    const DeviceScope outer(loopback);
    CHECK(Array::zeros({2}).device() == loopback);
    {
      const DeviceScope inner(Device::loopback(1));
      CHECK(Array::ones({2}).device() == Device::loopback(1));
    }
    CHECK(default_device() == loopback);
  }
  CHECK(Array::zeros({2}).device() == Device::cpu());
}

TEST_CASE("loopback memory comes from its own allocator") {
  const int64_t host_before = allocator_for(DeviceType::cpu).stats().bytes_in_use;
  const int64_t loopback_before = allocator_for(DeviceType::loopback).stats().bytes_in_use;
  {
    const Array a = Array::zeros({256, 256}, Dtype::float32, loopback);
    CHECK(allocator_for(DeviceType::loopback).stats().bytes_in_use - loopback_before == 256 * 256 * 4);
    CHECK(allocator_for(DeviceType::cpu).stats().bytes_in_use == host_before);
  }
  CHECK(allocator_for(DeviceType::loopback).stats().bytes_in_use == loopback_before);
}

TEST_CASE("loopback memory is handed out as NaN, so an unwritten output cannot pass for a result") {
  for (const Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
    INFO(dtype_name(dtype));
    for (const double v : Array::empty({3, 5}, dtype, loopback).to_vector<double>()) CHECK(std::isnan(v));
  }
  CHECK(Array::empty({4}, Dtype::int32, loopback).to_vector<int64_t>() == std::vector<int64_t>(4, -1));
}

TEST_CASE("the host reads loopback memory only through a transfer") {
  const Array a = Array::from_vector<float>({1, 2, 3, 4}, {2, 2}, {}, loopback);
  expect_error<DeviceError>([&] { a.data<float>(); }, {"host pointer", "loopback:0"});
  expect_error<DeviceError>([&] { a.host_data(); }, {"host_data", "host memory", "loopback:0", "to(Device::cpu())"});
  const Array host = a.to(Device::cpu());
  CHECK(host.device() == Device::cpu());
  CHECK(host.data<float>()[3] == 4);
  CHECK(host.get_item({1}).host_data() == static_cast<void*>(host.data<float>() + 2));
  CHECK(a.to_vector<float>() == std::vector<float>{1, 2, 3, 4});
  CHECK(a.get_item({1, 1}).item<float>() == 4);
}

TEST_CASE("transfers go host to loopback, loopback to loopback and back") {
  const Array host = random({3, 5}, 1);
  const Array there = host.to(loopback);
  CHECK(there.device() == loopback);
  const Array other = there.to(Device::loopback(1));
  CHECK(other.device() == Device::loopback(1));
  CHECK((other.storage() != there.storage()));
  expect_close(other.to(Device::cpu()), host, 0, 0);
  expect_close(there.get_item({Slice{}, Slice{1, 4}}).to(Device::cpu()), host.get_item({Slice{}, Slice{1, 4}}), 0, 0);
}

TEST_CASE("mixing devices is an error naming both") {
  const Array host = Array::ones({2, 2});
  const Array there = Array::ones({2, 2}, Dtype::float32, loopback);
  expect_error<DeviceError>([&] { ops::add(host, there); }, {"add", "cpu", "loopback:0"});
  expect_error<DeviceError>([&] { ops::add(there, Array::ones({2, 2}, Dtype::float32, Device::loopback(1))); },
                            {"add", "loopback:0", "loopback:1"});
  expect_error<DeviceError>([&] { F::matmul(Variable(host), Variable(there)); }, {"cpu", "loopback:0"});
  const Variable x(Array::ones({1, 2, 4, 4}, Dtype::float32, loopback)), w(Array::ones({3, 2, 3, 3}));
  expect_error<DeviceError>([&] { F::convolution_2d(x, w); }, {"convolution_2d", "loopback:0", "cpu"});
  expect_error<DeviceError>([&] { there.assign(host); }, {"assign", "loopback:0", "cpu"});
}

TEST_CASE("a loopback kernel refuses an operand on another device") {
  auto copy = kernel_for<kernel_ops::Copy>(loopback);
  const Array there = Array::ones({3}, Dtype::float32, loopback);
  expect_error<DeviceError>([&] { copy(there, Array::zeros({3})); }, {"copy", "expected every operand on loopback:0",
                                                                      "cpu"});
  expect_error<DeviceError>([&] { copy(Array::zeros({3}), there); }, {"copy", "loopback kernel", "cpu"});
}

TEST_CASE("three training steps of the MLP on loopback equal the CPU's to the bit") {
  const auto make = [] { return std::make_shared<M::MLP>(16, 4); };
  expect_identical(trained<M::MLP>(loopback, make, {8, 12}, 4), trained<M::MLP>(Device::cpu(), make, {8, 12}, 4));
}

TEST_CASE("three training steps of ResNet-20 on loopback equal the CPU's to the bit") {
  const auto make = [] { return std::make_shared<M::ResNet>(20, 1, 10); };
  expect_identical(trained<M::ResNet>(loopback, make, {4, 1, 12, 12}, 10),
                   trained<M::ResNet>(Device::cpu(), make, {4, 1, 12, 12}, 10));
}

TEST_CASE("a model on loopback saves to npz and loads back onto the host") {
  const auto path = std::filesystem::temp_directory_path() / ("kusari_loopback_" + std::to_string(getpid()) + ".npz");
  std::shared_ptr<M::MLP> saved;
  manual_seed(12);
  {
    const DeviceScope scope(loopback);
    saved = std::make_shared<M::MLP>(6, 3);
    saved->forward(Variable(Array::normal({2, 5}, 0, 1, 3), false));  // infers the first layer's input size
  }
  serializers::save_npz(path.string(), *saved);
  M::MLP loaded(6, 3);
  loaded.forward(Variable(Array::zeros({2, 5}), false));
  serializers::load_npz(path.string(), loaded);
  std::filesystem::remove(path);
  expect_identical(host_parameters(loaded), host_parameters(*saved));
  for (const auto& [name, param] : loaded.namedparams()) CHECK(param.data().device() == Device::cpu());
}
