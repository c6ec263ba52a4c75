#pragma once
// What the CUDA device suite's files share: the device, moving an array there in its memory order, and
// the comparison of a device result with the CPU's.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/memory_order.h>

namespace kusari::testing {

// The device the suite runs on.
inline const Device gpu = Device::cuda(0);

// a on the GPU, in a's memory order (Array::to makes it row-major).
inline Array on_gpu(const Array& a) { return in_order(a.to(gpu), memory_order_of(a)); }

// What a tolerance is relative to: each element's host value (at least 1), or the host's largest magnitude.
enum class Relative { to_element, to_largest };

// Checks a result computed on the GPU against the CPU's: same dtype and shape, every element within
// `tolerance` (relative as asked), NaN where the host has NaN; tolerance 0 asks for equal values.
inline void check_close(const Array& device_result, const Array& host_result, double tolerance, const std::string& what,
                        Relative relative = Relative::to_element) {
  INFO(what);
  REQUIRE(device_result.defined() == host_result.defined());
  if (!host_result.defined()) return;
  REQUIRE(device_result.device() == gpu);
  const Array d = device_result.to(Device::cpu());
  REQUIRE(d.dtype() == host_result.dtype());
  REQUIRE(d.shape() == host_result.shape());
  const std::vector<double> got = d.to_vector<double>(), want = host_result.to_vector<double>();
  double largest = 1e-30;
  for (const double w : want) largest = std::max(largest, std::isfinite(w) ? std::fabs(w) : 0.0);
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element ", i, ": device ", got[i], ", host ", want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
    } else if (tolerance == 0 || std::isinf(want[i])) {
      CHECK(got[i] == want[i]);
    } else {
      const double scale = relative == Relative::to_largest ? largest : std::max(std::fabs(want[i]), 1.0);
      CHECK(std::fabs(got[i] - want[i]) <= tolerance * scale);
    }
  }
}

}  // namespace kusari::testing
