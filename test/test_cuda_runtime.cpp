// kusari::cuda in every build: whether the backend is there, and the errors a machine without a GPU
// gives (each names the device and says "no CUDA device" with the runtime's reason).

#include <doctest/doctest.h>

#include <string>

#include <kusari/core/allocator.h>
#include <kusari/core/array.h>
#include <kusari/kernels/cuda/runtime.h>

using namespace kusari;

TEST_CASE("built_with_cuda says whether meson built the backend") {
  CHECK(cuda::built_with_cuda() == static_cast<bool>(KUSARI_TEST_BUILT_WITH_CUDA));
}

TEST_CASE("a device index beyond what the process sees is refused, naming it" *
          doctest::skip(!cuda::built_with_cuda())) {
  try {
    Array::zeros({4}, Dtype::float32, Device::cuda(63));
    FAIL("expected DeviceError");
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    CHECK(what.find("cuda:63") != std::string::npos);
    CHECK((what.find("no CUDA device") != std::string::npos || what.find("this process sees") != std::string::npos));
  }
}

TEST_CASE("without a GPU, every entry point says no CUDA device and why" * doctest::skip(cuda::device_count() > 0)) {
  CHECK(cuda::device_count() == 0);
  const std::string reason = cuda::unavailable_reason();
  CHECK(reason.rfind("no CUDA device", 0) == 0);
  CHECK_THROWS_AS(cuda::synchronize(0), DeviceError);
  if (cuda::built_with_cuda()) {
    CHECK_THROWS_WITH_AS(Array::zeros({4}, Dtype::float32, Device::cuda(0)), ("allocate on cuda:0: " + reason).c_str(),
                         DeviceError);
    const Array host = Array::ones({3});
    CHECK_THROWS_WITH_AS(host.to(Device::cuda(0)), ("allocate on cuda:0: " + reason).c_str(), DeviceError);
    cuda::empty_cache();  // nothing cached, nothing to do
    CHECK(allocator_for(DeviceType::cuda).stats().bytes_in_use == 0);
  } else {
    CHECK(reason.find("built without its CUDA backend") != std::string::npos);
  }
}
