#pragma once
// Internal to the backends, compiled for the host and (under nvcc) for the device: division of unsigned
// 32-bit numbers by a divisor fixed before a kernel starts, as one multiply-high, an add and a shift. A GPU
// has no integer divider (a 64-bit division is some seventy instructions), so kernels that turn element
// positions into coordinates divide this way wherever their positions fit 32 bits. The multiplier is
// Granlund and Montgomery's for a 33-bit magic number: with s = ceil(log2 d) and
// m = floor(2^32 (2^s - d) / d) + 1, n / d = (mulhi(n, m) + n) >> s for every 32-bit n.

#include <cstdint>

#include <kusari/core/detail/host_device.h>
#include <kusari/core/error.h>

namespace kusari::kernels {

// Whether the positions of a launch over `elements` elements fit the 32 bits FastDivider divides: a
// kernel's condition for dividing positions with it.
KUSARI_HOST_DEVICE inline bool fits_fast_division(int64_t elements) { return elements <= int64_t{UINT32_MAX}; }

// A quotient and its remainder.
struct QuotientRemainder {
  uint32_t quotient, remainder;
};

// Division by one divisor (≥ 1) of any unsigned 32-bit number.
class FastDivider {
 public:
  // Division by 1.
  FastDivider() = default;
  // Division by `divisor`; ValueError unless 1 ≤ divisor < 2^32.
  explicit FastDivider(int64_t divisor) {
    if (divisor < 1 || divisor > int64_t{UINT32_MAX}) {
      throw ValueError(cat("FastDivider: expected a divisor in [1, 2^32), got ", divisor));
    }
    divisor_ = static_cast<uint32_t>(divisor);
    while ((uint64_t{1} << shift_) < divisor_) ++shift_;
    magic_ = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift_) - divisor_)) / divisor_ + 1);
  }
  // The divisor.
  KUSARI_HOST_DEVICE uint32_t divisor() const { return divisor_; }
  // n / divisor, rounded down.
  KUSARI_HOST_DEVICE uint32_t divide(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t high = __umulhi(n, magic_);
#else
    const auto high = static_cast<uint32_t>((uint64_t{n} * magic_) >> 32);
#endif
    return static_cast<uint32_t>((uint64_t{high} + n) >> shift_);
  }
  // n / divisor and n % divisor.
  KUSARI_HOST_DEVICE QuotientRemainder divide_with_remainder(uint32_t n) const {
    const uint32_t q = divide(n);
    return {q, n - q * divisor_};
  }

 private:
  uint32_t divisor_ = 1;
  uint32_t magic_ = 1;
  uint32_t shift_ = 0;
};

}  // namespace kusari::kernels
