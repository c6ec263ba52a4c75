#include <kusari/data/random_stream.h>

#include <numeric>
#include <utility>

#include <kusari/core/error.h>
#include <kusari/core/random.h>

namespace kusari::data {

uint64_t random_bits(uint64_t seed, uint64_t a, uint64_t b) {
  const auto r = philox4x32({static_cast<uint32_t>(a), static_cast<uint32_t>(a >> 32), static_cast<uint32_t>(b),
                             static_cast<uint32_t>(b >> 32)},
                            {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
  return (static_cast<uint64_t>(r[0]) << 32) | r[1];
}

uint64_t random_below(uint64_t n, uint64_t seed, uint64_t a, uint64_t b) {
  if (n == 0) throw ValueError("random_below: expected a positive bound, got 0");
  // The multiply-shift map of 64 random bits onto [0, n): bias below n / 2^64.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(random_bits(seed, a, b)) * n) >> 64);
}

std::vector<int64_t> random_permutation(int64_t n, uint64_t seed, uint64_t stream) {
  if (n < 0) throw ValueError(cat("random_permutation: expected a non-negative length, got ", n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = random_below(static_cast<uint64_t>(i) + 1, seed, static_cast<uint64_t>(i), stream);
    std::swap(order[static_cast<size_t>(i)], order[j]);
  }
  return order;
}

}  // namespace kusari::data
