// The CUDA backend on a GPU: transfers of every dtype (through the staging buffers, in several chunks),
// copies with conversion and any strides, fill, and the allocator's reuse, each against the CPU. Exits
// 77 (meson's "skipped") with the reason where the process sees no CUDA device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <kusari/core/allocator.h>
#include <kusari/core/array.h>
#include <kusari/kernels/cuda/runtime.h>

using namespace kusari;

namespace {

const Device gpu = Device::cuda(0);

const std::vector<Dtype> all_dtypes = {Dtype::float32, Dtype::float16, Dtype::bfloat16, Dtype::float64,
                                       Dtype::int32,   Dtype::int64,   Dtype::uint8,    Dtype::bool_};

// Values that exercise rounding and signs, as dtype.
Array sample(const Shape& shape, Dtype dtype) {
  return Array::uniform(shape, -3.0, 300.0, 7, Dtype::float64).astype(dtype);
}

// True when a and b (both on the host) hold the same bytes in the same shape and dtype.
bool same_elements(const Array& a, const Array& b) {
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  const Array x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.host_data(), y.host_data(), static_cast<size_t>(x.nbytes())) == 0;
}

}  // namespace

TEST_CASE("host to device and back keeps every byte of every dtype") {
  for (const Dtype dtype : all_dtypes) {
    CAPTURE(dtype);
    const Array host = sample({3, 5, 7}, dtype);
    const Array on_gpu = host.to(gpu);
    CHECK(on_gpu.device() == gpu);
    CHECK(same_elements(on_gpu.to(Device::cpu()), host));
  }
}

TEST_CASE("a transfer larger than the staging buffers goes through in chunks") {
  const Array host = Array::arange(0, 5'000'000, 1, Dtype::float32);  // 20 MB: three 8 MiB chunks
  CHECK(same_elements(host.to(gpu).to(Device::cpu()), host));
}

TEST_CASE("copies with dtype conversion equal the CPU's, for every pair and strided sources") {
  for (const Dtype from : all_dtypes) {
    const Array host = sample({6, 9}, from);
    const Array device = host.to(gpu);
    for (const Dtype to : all_dtypes) {
      CAPTURE(from);
      CAPTURE(to);
      CHECK(same_elements(device.astype(to).to(Device::cpu()), host.astype(to)));
      CHECK(same_elements(device.transpose().astype(to).to(Device::cpu()), host.transpose().astype(to)));
    }
  }
  const Array host = sample({4, 1, 5}, Dtype::float32);
  const Array broadcast = host.to(gpu).broadcast_to({4, 3, 5}).copy();
  CHECK(same_elements(broadcast.to(Device::cpu()), host.broadcast_to({4, 3, 5}).copy()));
}

TEST_CASE("fill rounds as the CPU does") {
  for (const Dtype dtype : all_dtypes) {
    CAPTURE(dtype);
    const Array device = Array::empty({33}, dtype, gpu);
    device.fill(1.0 / 3.0);
    const Array host = Array::empty({33}, dtype);
    host.fill(1.0 / 3.0);
    CHECK(same_elements(device.to(Device::cpu()), host));
  }
}

TEST_CASE("freed device memory is reused by the next step's allocation of that size") {
  cuda::synchronize(0);
  cuda::empty_cache();
  Allocator& allocator = allocator_for(DeviceType::cuda);
  const AllocatorStats before = allocator.stats();
  for (int step = 0; step < 3; ++step) Array::zeros({1 << 20}, Dtype::float32, gpu);
  const AllocatorStats after = allocator.stats();
  CHECK(after.fresh_allocations - before.fresh_allocations == 1);
  CHECK(after.pooled_allocations - before.pooled_allocations == 2);
  cuda::empty_cache();
  CHECK(allocator.stats().bytes_cached == 0);
}

int main(int argc, char** argv) {
  if (cuda::device_count() == 0) {
    std::printf("skipped: %s\n", cuda::unavailable_reason().c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
