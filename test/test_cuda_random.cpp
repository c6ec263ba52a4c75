// The CUDA random fills against the CPU's: the same numbers to the bit for one seed and offset, for
// every distribution and dtype, contiguous or strided, at any offset (odd ones split a Philox pair);
// float64 normals to the last few bits (their log, sin and cos come from CUDA's libm).
// Part of test_cuda_device (its main skips without a GPU).
#include <doctest/doctest.h>

#include <cstring>

#include <kusari/core/array.h>
#include <kusari/kernels/layer_routines.h>

#include "cuda_testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

// True when a (on the GPU) and b (on the host) hold the same bytes.
bool same_bits(const Array& a, const Array& b) {
  const Array x = a.to(Device::cpu()).contiguous(), y = b.contiguous();
  return x.dtype() == y.dtype() && x.shape() == y.shape() &&
         std::memcmp(x.host_data(), y.host_data(), static_cast<size_t>(x.nbytes())) == 0;
}

}  // namespace

TEST_CASE("uniform and normal arrays equal the CPU's bit for bit in every dtype") {
  for (const Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16, Dtype::int32}) {
    CAPTURE(dtype);
    CHECK(
        same_bits(Array::uniform({37, 29}, -2.5, 7.0, 31, dtype, gpu), Array::uniform({37, 29}, -2.5, 7.0, 31, dtype)));
    const Array device_normal = Array::normal({1001}, 0.5, 3.0, 32, dtype, gpu);
    const Array host_normal = Array::normal({1001}, 0.5, 3.0, 32, dtype);
    if (dtype == Dtype::float64) {
      check_close(device_normal, host_normal, 1e-14, "float64 normals");
    } else {
      CHECK(same_bits(device_normal, host_normal));
    }
  }
}

TEST_CASE("fills at odd offsets, into strided views and from bernoulli equal the CPU's") {
  for (const Distribution distribution : {Distribution::uniform, Distribution::normal, Distribution::bernoulli}) {
    for (const uint64_t offset : {uint64_t{0}, uint64_t{1}, uint64_t{12345}, uint64_t{1} << 40}) {
      CAPTURE(static_cast<int>(distribution));
      CAPTURE(offset);
      const double p0 = distribution == Distribution::bernoulli ? 0.3 : -1.0, p1 = 2.0;
      const Array host = Array::zeros({20, 30}, Dtype::float32), device = Array::zeros({20, 30}, Dtype::float32, gpu);
      ops::fill_random(host.transpose(), distribution, 77, offset, p0, p1);
      ops::fill_random(device.transpose(), distribution, 77, offset, p0, p1);
      CHECK(same_bits(device, host));
    }
  }
}

TEST_CASE("a uniform range too narrow for the dtype stays half-open on the device too") {
  // float16 has no value strictly between 1 and 1 + 2^-10: every draw must come back as 1.
  const Array device = Array::uniform({4096}, 1.0, 1.0 + 0x1p-10, 5, Dtype::float16, gpu);
  CHECK(same_bits(device, Array::uniform({4096}, 1.0, 1.0 + 0x1p-10, 5, Dtype::float16)));
  CHECK(device.to(Device::cpu()).astype(Dtype::float64).to_vector<double>() == std::vector<double>(4096, 1.0));
}
