// Division by a divisor fixed in advance (kernels/detail/fast_division.h), on the host: quotient and
// remainder equal the integer division's for divisors across the whole 32-bit range (small ones,
// powers of two and their neighbours, primes, the largest) and numerators at and around their
// multiples, at the ends of the range and drawn at random.

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include <kusari/kernels/detail/fast_division.h>

using namespace kusari;
using namespace kusari::kernels;

namespace {

// The divisors tried: 1 to 1000, every power of two and its neighbours, some primes, the largest.
std::vector<uint32_t> divisors() {
  std::vector<uint32_t> d;
  for (uint32_t i = 1; i <= 1000; ++i) d.push_back(i);
  for (int s = 1; s < 32; ++s) {
    const uint64_t p = uint64_t{1} << s;
    for (const uint64_t v : {p - 1, p, p + 1}) d.push_back(static_cast<uint32_t>(v));
  }
  for (const uint32_t v : {65521u, 65537u, 1000003u, 2147483647u, 3000000019u, 4294967291u, 4294967295u}) {
    d.push_back(v);
  }
  return d;
}

}  // namespace

TEST_CASE("a fixed divisor's quotients and remainders equal integer division's over the 32-bit range") {
  std::mt19937_64 engine(7);
  std::uniform_int_distribution<uint32_t> any(0, UINT32_MAX);
  int64_t wrong = 0, tried = 0;
  for (const uint32_t d : divisors()) {
    const FastDivider divider(d);
    CHECK(divider.divisor() == d);
    std::vector<uint32_t> numerators = {0, 1, 2, d - 1, d, UINT32_MAX, UINT32_MAX - 1, 2147483647u, 2147483648u};
    for (const uint64_t k : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{UINT32_MAX} / d}) {
      for (const int64_t delta : {-1, 0, 1}) {
        const int64_t n = static_cast<int64_t>(k * d) + delta;
        if (n >= 0 && n <= int64_t{UINT32_MAX}) numerators.push_back(static_cast<uint32_t>(n));
      }
    }
    for (int i = 0; i < 200; ++i) numerators.push_back(any(engine));
    for (const uint32_t n : numerators) {
      const QuotientRemainder qr = divider.divide_with_remainder(n);
      wrong += qr.quotient != n / d || qr.remainder != n % d;
      ++tried;
    }
  }
  CHECK(wrong == 0);
  CHECK(tried > 200000);
  // Every numerator below 2^20 for a few divisors.
  for (const uint32_t d : {3u, 7u, 56u, 112u, 3136u}) {
    const FastDivider divider(d);
    bool equal = true;
    for (uint32_t n = 0; n < (1u << 20); ++n) equal = equal && divider.divide(n) == n / d;
    CHECK(equal);
  }
}

TEST_CASE("a divisor outside [1, 2^32) is refused") {
  CHECK(FastDivider().divide(12345) == 12345);
  CHECK_THROWS_WITH_AS(FastDivider(0), doctest::Contains("got 0"), ValueError);
  CHECK_THROWS_AS(FastDivider(int64_t{1} << 32), ValueError);
  CHECK_THROWS_AS(FastDivider(-3), ValueError);
}
