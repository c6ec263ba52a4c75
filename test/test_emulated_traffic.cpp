// The host emulation's record of its kernels' device-memory traffic (detail/emulated_traffic.h): a warp's
// lanes at one instruction make one request that moves every 32-byte sector they touch, sectors read again
// count once per launch among the distinct ones, and only device memory counts. This file is compiled
// with the kernel sources' instrumentation (test/meson.build), so its kernels call the hooks as theirs do;
// the hooks also fail a launch whose access is not aligned to its size, as a GPU does.
#include <kusari/kernels/cuda/detail/emulated_device_code.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/kernels/cuda/detail/emulated_traffic.h>
#include <kusari/kernels/cuda/detail/launch.cuh>

using kusari::kernels::cuda::launch_kernel;
namespace emulation = kusari::kernels::cuda::emulation;

namespace {

// Thread i copies x[i * stride % period] to y[i].
__global__ void copy_spread(const float* x, float* y, int stride, int period) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  y[i] = x[i * stride % period];
}

// Thread i adds x[i] to y[i] in place.
__global__ void add_in_place(const float* x, float* y) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  y[i] += x[i];
}

// Thread i copies the 4 bytes at byte `shift` of x's element i, as an int32, to y[i].
__global__ void copy_shifted_words(const float* x, int32_t* y, int shift) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  y[i] = *reinterpret_cast<const int32_t*>(reinterpret_cast<const char*>(x + i) + shift);
}

// Two 8-byte words: 16 bytes aligned to 8, which a GPU moves in two 8-byte accesses.
struct TwoWords {
  int64_t first, second;
};

// Thread i copies x[i] to y[i] whole.
__global__ void copy_word_pairs(const TwoWords* x, TwoWords* y) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  y[i] = x[i];
}

// Device memory for n floats, freed with the object.
struct DeviceFloats {
  float* data = nullptr;
  explicit DeviceFloats(size_t n) {
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&data), n * sizeof(float)) == cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(data); }
};

// The traffic of one launch of copy_spread over 2 blocks of 64 threads, recorded alone.
emulation::KernelTraffic traffic_of_copy(const float* x, float* y, int stride, int period) {
  emulation::clear_recorded_traffic();
  emulation::record_traffic(true);
  launch_kernel(&copy_spread, 2, 64, nullptr, x, y, stride, period);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  emulation::record_traffic(false);
  const std::vector<emulation::KernelTraffic> recorded = emulation::recorded_traffic();
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0].kernel == reinterpret_cast<const void*>(&copy_spread));
  CHECK(recorded[0].launches == 1);
  return recorded[0];
}

// Checks a tally's counts: accesses, requests, bytes asked for, sectors moved, the fewest that would
// hold each request's distinct bytes, distinct sectors.
void check_tally(const emulation::AccessTally& t, uint64_t accesses, uint64_t requests, uint64_t bytes,
                 uint64_t sectors, uint64_t least_sectors, uint64_t distinct) {
  CHECK(t.accesses == accesses);
  CHECK(t.requests == requests);
  CHECK(t.bytes == bytes);
  CHECK(t.sectors == sectors);
  CHECK(t.least_sectors == least_sectors);
  CHECK(t.distinct_sectors == distinct);
}

}  // namespace

TEST_CASE("a warp's loads and stores at one instruction are one request moving the sectors its lanes touch") {
  DeviceFloats x(128 * 8), y(128);
  SUBCASE("neighbouring lanes, neighbouring floats: four sectors a warp") {
    const emulation::KernelTraffic t = traffic_of_copy(x.data, y.data, 1, 128);
    check_tally(t.loads, 128, 4, 512, 16, 16, 16);
    check_tally(t.stores, 128, 4, 512, 16, 16, 16);
    REQUIRE(t.sites.size() == 2);
  }
  SUBCASE("lanes 32 bytes apart: a sector each") {
    const emulation::KernelTraffic t = traffic_of_copy(x.data, y.data, 8, 128 * 8);
    check_tally(t.loads, 128, 4, 512, 128, 16, 128);
    check_tally(t.stores, 128, 4, 512, 16, 16, 16);
  }
  SUBCASE("every warp reading the same 32 floats: their sectors move in each request, and are 4 distinct") {
    const emulation::KernelTraffic t = traffic_of_copy(x.data, y.data, 1, 32);
    check_tally(t.loads, 128, 4, 512, 16, 16, 4);
  }
  SUBCASE("a warp's 128 bytes 16 bytes past a sector's start: five sectors where four would hold them") {
    const emulation::KernelTraffic t = traffic_of_copy(x.data + 4, y.data, 1, 128);
    check_tally(t.loads, 128, 4, 512, 20, 16, 17);
  }
  SUBCASE("every lane reading one float: one sector a request") {
    const emulation::KernelTraffic t = traffic_of_copy(x.data, y.data, 0, 1);
    check_tally(t.loads, 128, 4, 512, 4, 4, 1);
  }
}

TEST_CASE("a store after a load of the same address is recorded too") {
  DeviceFloats x(128), y(128);
  emulation::clear_recorded_traffic();
  emulation::record_traffic(true);
  launch_kernel(&add_in_place, 2, 64, nullptr, x.data, y.data);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  emulation::record_traffic(false);
  const emulation::KernelTraffic t = emulation::recorded_traffic().at(0);
  check_tally(t.loads, 256, 8, 1024, 32, 32, 32);
  check_tally(t.stores, 128, 4, 512, 16, 16, 16);
}

TEST_CASE("host memory, and launches while recording is off, are not device traffic") {
  std::vector<float> host(128, 1.0f);
  DeviceFloats y(128);
  const emulation::KernelTraffic t = traffic_of_copy(host.data(), y.data, 1, 128);
  check_tally(t.loads, 0, 0, 0, 0, 0, 0);
  check_tally(t.stores, 128, 4, 512, 16, 16, 16);
  launch_kernel(&copy_spread, 2, 64, nullptr, host.data(), y.data, 1, 128);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(emulation::recorded_traffic()[0].launches == 1);
}

TEST_CASE("a thread's access off its size's alignment fails the launch, as on a GPU") {
  DeviceFloats x(65);
  DeviceFloats y(64);
  auto* words = reinterpret_cast<int32_t*>(y.data);
  launch_kernel(&copy_shifted_words, 1, 64, nullptr, x.data, words, 4);  // aligned: the next element
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  // A 16-byte struct of 8-byte alignment 8 bytes off a 16-byte boundary is aligned enough.
  DeviceFloats pairs(2 + 4 * 16), copies(2 + 4 * 16);
  launch_kernel(&copy_word_pairs, 1, 16, nullptr, reinterpret_cast<const TwoWords*>(pairs.data + 2),
                reinterpret_cast<TwoWords*>(copies.data + 2));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  try {
    launch_kernel(&copy_shifted_words, 1, 64, nullptr, x.data, words, 2);
    cudaDeviceSynchronize();
    FAIL("expected a DeviceError");
  } catch (const kusari::DeviceError& e) {
    const std::string message = e.what();
    CHECK(message.find("a 4-byte load at address 0x") != std::string::npos);
    CHECK(message.find("is not aligned to 4 bytes, which a GPU refuses (cudaErrorMisalignedAddress)") !=
          std::string::npos);
    CHECK(message.find("the instruction: {\"object\": \"") != std::string::npos);
  }
}
