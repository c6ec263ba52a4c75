// The CUDA backend on a GPU: transfers of every dtype (through the staging buffers, in several chunks),
// copies with conversion and any strides, fill, and the allocator's reuse, each against the CPU. Exits
// 77 (meson's "skipped") with the reason where the process sees no CUDA device.
#include "cuda_main.h"
#include "testing.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <kusari/core/allocator.h>
#include <kusari/core/array.h>
#include <kusari/core/error.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/runtime.h>

using namespace kusari;

namespace {

const Device gpu = Device::cuda(0);

const std::vector<Dtype> all_dtypes = {Dtype::float32, Dtype::float16, Dtype::bfloat16, Dtype::float64,
                                       Dtype::int32,   Dtype::int64,   Dtype::uint8,    Dtype::bool_};

// A double with these bits.
double from_bits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// The values where conversions differ between implementations: NaNs with signs and payloads (a
// signaling one too), infinities, signed zeros, subnormals, overflow of each narrower type, ties and
// a value that rounds differently through float than directly to float16, and floats beyond the
// integers' ranges.
const std::vector<double> special_values = {from_bits(0x7ff8000000000000),
                                            from_bits(0xfff8000000012345),
                                            from_bits(0x7ff4000000000001),
                                            from_bits(0x7ffc0a0b0c0d0e0f),
                                            INFINITY,
                                            -INFINITY,
                                            -0.0,
                                            0.0,
                                            1e30,
                                            -1e30,
                                            65504.0,
                                            65520.0,
                                            70000.0,
                                            0x1p-24,
                                            0x1.8p-25,
                                            0x1p-140,
                                            1.0 + 0x1p-11 + 0x1p-40,
                                            1.0 + 0x1p-8 + 0x1p-35,
                                            2.5,
                                            -2.7,
                                            254.9,
                                            255.5,
                                            300.0,
                                            -300.0,
                                            2147483648.0,
                                            3e9,
                                            -3e9,
                                            9.3e18,
                                            -9.3e18,
                                            1.0 / 3.0};

// Uniform values in (-300, 300) that begin with special_values (as many as fit), as dtype.
Array sample(const Shape& shape, Dtype dtype) {
  std::vector<double> v = Array::uniform(shape, -300.0, 300.0, 7, Dtype::float64).to_vector<double>();
  std::copy_n(special_values.begin(), std::min(v.size(), special_values.size()), v.begin());
  return Array::from_vector(v, shape).astype(dtype);
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

TEST_CASE("transfers queued back to back come round the staging ring, and one grows it, keeping every byte") {
  // Some 50 MB of transfers from 4 bytes to 8 MB with no synchronization between them: the ring
  // (32 MiB for them) comes round, then a 60 MB one makes it grow while the smaller ones may still be
  // in flight.
  std::vector<Array> sent, hosts;
  for (int k = 0; k < 60; ++k) {
    const int64_t elements = k % 3 == 0 ? 1 + k : int64_t{1} << (10 + k % 12);
    hosts.push_back(Array::uniform({elements}, -1, 1, static_cast<uint64_t>(300 + k), Dtype::float32));
    sent.push_back(hosts.back().to(gpu));
  }
  hosts.push_back(Array::uniform({15'000'000}, -1, 1, 399, Dtype::float32));
  sent.push_back(hosts.back().to(gpu));
  for (size_t k = 0; k < sent.size(); ++k) {
    CAPTURE(k);
    CHECK(same_elements(sent[k].to(Device::cpu()), hosts[k]));
  }
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

TEST_CASE("copies of one dtype keep every byte: dense runs as one memcpy, at an offset, and across memory orders") {
  for (const Dtype dtype : all_dtypes) {
    CAPTURE(dtype);
    const Array host = sample({3, 4, 5, 6}, dtype);
    const Array device = host.to(gpu);
    CHECK(same_elements(device.copy().to(Device::cpu()), host));
    const Array channels_last = in_order(device, MemoryOrder::channels_last);
    CHECK(memory_order_of(channels_last) == MemoryOrder::channels_last);
    const Array dense_copy = channels_last.copy();
    CHECK(same_elements(dense_copy.to(Device::cpu()), host));
    CHECK(same_elements(in_order(channels_last, MemoryOrder::row_major).to(Device::cpu()), host));
    // Rows 1 and 2 of the first axis: one dense run starting 120 elements in.
    const std::vector<Index> rows{Slice{1, 3}};
    CHECK(same_elements(device.get_item(rows).copy().to(Device::cpu()), host.get_item(rows).copy()));
    // Every other element of the last axis: not a dense run.
    const std::vector<Index> every_other{Ellipsis{}, Slice{0, 6, 2}};
    CHECK(same_elements(device.get_item(every_other).copy().to(Device::cpu()), host.get_item(every_other).copy()));
  }
}

TEST_CASE("copies that transpose planes go through tiles, partial ones at the edges too") {
  for (const Dtype from : all_dtypes) {
    const Array host = sample({3, 40, 7, 9}, from);  // 40 channels, 63 places: two tiles each way, partial
    const Array device = host.to(gpu);
    const Array channels_last = in_order(device, MemoryOrder::channels_last);
    const Array matrix = sample({33, 70}, from);
    for (const Dtype to : {from, Dtype::float32, Dtype::float16}) {
      CAPTURE(from);
      CAPTURE(to);
      CHECK(same_elements(in_order(device.astype(to), MemoryOrder::channels_last).to(Device::cpu()), host.astype(to)));
      CHECK(same_elements(in_order(channels_last, MemoryOrder::row_major).astype(to).to(Device::cpu()),
                          host.astype(to)));
      CHECK(same_elements(channels_last.astype(to).contiguous().to(Device::cpu()), host.astype(to)));
      Array converted = Array::empty(host.shape(), to, gpu);  // row-major: converted and transposed at once
      converted.assign(channels_last);
      CHECK(same_elements(converted.to(Device::cpu()), host.astype(to)));
      CHECK(same_elements(matrix.to(gpu).transpose().astype(to).contiguous().to(Device::cpu()),
                          matrix.transpose().astype(to).contiguous()));
      // A 3 x 3 filter made channels-last: planes of 9 places by 20 input channels.
      const Array filter = sample({6, 20, 3, 3}, from);
      CHECK(same_elements(in_order(filter.to(gpu), MemoryOrder::channels_last).astype(to).to(Device::cpu()),
                          filter.astype(to)));
      // Axes reversed: the planes' batch axis between their rows and columns.
      const Array cube = sample({40, 3, 50}, from);
      CHECK(same_elements(cube.to(gpu).transpose().astype(to).contiguous().to(Device::cpu()),
                          cube.transpose().astype(to).contiguous()));
    }
  }
}

TEST_CASE("fill rounds as the CPU does") {
  for (const Dtype dtype : all_dtypes) {
    for (const double value : special_values) {
      CAPTURE(dtype);
      CAPTURE(value);
      const Array device = Array::empty({33}, dtype, gpu);
      device.fill(value);
      const Array host = Array::empty({33}, dtype);
      host.fill(value);
      CHECK(same_elements(device.to(Device::cpu()), host));
    }
  }
}

TEST_CASE("freed device memory is reused by the next step's allocation of that size unless KUSARI_CUDA_CACHE=0") {
  const char* setting = std::getenv("KUSARI_CUDA_CACHE");
  const std::string given = setting ? setting : "";
  if (!given.empty() && given != "0" && given != "1") {  // refused at the first allocation and every next
    for (int attempt = 0; attempt < 2; ++attempt) {
      kusari::testing::expect_error<ValueError>([] { Array::zeros({4}, Dtype::float32, gpu); },
                                                {"KUSARI_CUDA_CACHE", "expected 0 or 1", "'" + given + "'"});
    }
    return;
  }
  const bool caching = given != "0";
  cuda::synchronize(0);
  cuda::empty_cache();
  Allocator& allocator = allocator_for(DeviceType::cuda);
  const AllocatorStats before = allocator.stats();
  for (int step = 0; step < 3; ++step) Array::zeros({1 << 20}, Dtype::float32, gpu);
  const AllocatorStats after = allocator.stats();
  CHECK(after.fresh_allocations - before.fresh_allocations == (caching ? 1 : 3));
  CHECK(after.pooled_allocations - before.pooled_allocations == (caching ? 2 : 0));
  CHECK((after.bytes_cached > 0) == caching);
  cuda::empty_cache();
  CHECK(allocator.stats().bytes_cached == 0);
}

TEST_CASE("a stream's large arrays lie next to each other in its expandable segment unless KUSARI_CUDA_EXPANDABLE=0") {
  const char* cache_setting = std::getenv("KUSARI_CUDA_CACHE");
  if (cache_setting && std::string(cache_setting) == "0") return;  // every array its own allocation
  const char* setting = std::getenv("KUSARI_CUDA_EXPANDABLE");
  const std::string given = setting ? setting : "";
  constexpr int64_t kFloats = 3 << 20;  // 12 MiB: large blocks, a multiple of the 2 MiB granularity
  if (!given.empty() && given != "0" && given != "1") {  // refused at the first large allocation and every next
    for (int attempt = 0; attempt < 2; ++attempt) {
      kusari::testing::expect_error<ValueError>([] { Array::empty({kFloats}, Dtype::float32, gpu); },
                                                {"KUSARI_CUDA_EXPANDABLE", "expected 0 or 1", "'" + given + "'"});
    }
    return;
  }
  // The emulated device can play one whose driver cannot map memory into reserved addresses.
  const char* vmm = std::getenv("KUSARI_EMULATED_DRIVER_VMM");
  const bool expandable = given != "0" && !(vmm && std::string(vmm) == "0");
  cuda::synchronize(0);
  cuda::empty_cache();
  Allocator& allocator = allocator_for(DeviceType::cuda);
  REQUIRE(allocator.stats().bytes_cached == 0);  // nothing free in the middle of a segment to take instead
  const AllocatorStats before = allocator.stats();
  {
    const Array a = Array::full({kFloats}, 1.0, Dtype::float32, gpu);
    const Array b = Array::full({kFloats}, 2.0, Dtype::float32, gpu);
    const auto* first = static_cast<const char*>(a.storage()->data);
    const auto* second = static_cast<const char*>(b.storage()->data);
    if (expandable) CHECK(second == first + kFloats * 4);
    CHECK(allocator.stats().fresh_allocations - before.fresh_allocations == 2);
    CHECK(same_elements(a.to(Device::cpu()), Array::full({kFloats}, 1.0)));
    CHECK(same_elements(b.to(Device::cpu()), Array::full({kFloats}, 2.0)));
  }
  // Freed, the two merge: one array of both their sizes takes their memory without a new allocation
  // (where each was a segment of its own, it takes a third).
  {
    const Array both = Array::full({2 * kFloats}, 3.0, Dtype::float32, gpu);
    CHECK(allocator.stats().fresh_allocations - before.fresh_allocations == (expandable ? 2 : 3));
    CHECK(same_elements(both.to(Device::cpu()), Array::full({2 * kFloats}, 3.0)));
  }
  cuda::synchronize(0);
  cuda::empty_cache();
  CHECK(allocator.stats().bytes_cached == 0);
}

