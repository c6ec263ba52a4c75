#include <kusari/core/random.h>

#include <cmath>

namespace kusari {

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  constexpr uint64_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = kMul0 * c[0];
    const uint64_t p1 = kMul1 * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
    k[0] += kWeyl0;
    k[1] += kWeyl1;
  }
  return c;
}

Generator& default_generator() {
  static Generator generator(0);
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().set_state(seed, 0); }

namespace {
std::array<uint32_t, 4> block(uint64_t seed, uint64_t index) {
  return philox4x32({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), 0, 0},
                    {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}
// 53 random bits from two words, as a double in [0, 1).
double to_unit(uint32_t hi, uint32_t lo) {
  return static_cast<double>((static_cast<uint64_t>(hi) << 21) ^ (lo >> 11)) * 0x1.0p-53;
}
}  // namespace

std::array<double, 2> uniform_pair(uint64_t seed, uint64_t pair) {
  const auto r = block(seed, pair);
  return {to_unit(r[0], r[1]), to_unit(r[2], r[3])};
}

std::array<double, 2> normal_pair(uint64_t seed, uint64_t pair) {
  const auto [a, b] = uniform_pair(seed, pair);
  const double radius = std::sqrt(-2.0 * std::log(1.0 - a));  // 1 - a in (0, 1]: the log is finite
  const double angle = 2.0 * M_PI * b;
  return {radius * std::cos(angle), radius * std::sin(angle)};
}

double uniform_at(uint64_t seed, uint64_t index) { return uniform_pair(seed, index >> 1)[index & 1]; }

double normal_at(uint64_t seed, uint64_t index) { return normal_pair(seed, index >> 1)[index & 1]; }

}  // namespace kusari
